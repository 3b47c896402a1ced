"""Property tests (hypothesis) of attnviz.store: int8 block quantization (error at most half a step
per block, zero blocks exact, any shape) and a checkpoint header written and read back with
arbitrary JSON meta."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnviz.store.checkpoint import load_checkpoint, read_header, save
from attnviz.store.header import clean_meta
from attnviz.store.quantize import BLOCK, LEVELS, dequantize_rows, quantize_rows, scale_shape

FAST = settings(max_examples=120, deadline=None, derandomize=True)

# up to 1e38: within a few ulps of float32 max, q * s rounds to inf (REPORT.md, finding on FLT_MAX)
finite32 = st.floats(-9.999999680285692e37, 9.999999680285692e37, width=32)
matrices = st.tuples(st.integers(1, 4), st.integers(1, 3 * BLOCK + 5)).flatmap(
    lambda shape: arrays(
        np.float32,
        shape,
        elements=finite32 | st.just(0.0) | st.floats(-9.99994610111476e-41, 9.99994610111476e-41, width=32),
    )
)


@FAST
@given(matrices)
def test_int8_error_is_half_a_step(w):
    t = torch.from_numpy(w)
    q, scale = quantize_rows(t)
    assert q.dtype == torch.int8 and q.shape == t.shape and list(scale.shape) == scale_shape(list(t.shape))
    assert (q.abs() <= LEVELS).all()
    assert torch.isfinite(scale).all() and (scale >= 0).all()
    back = dequantize_rows(q, scale).double()
    _rows, cols = t.shape
    step = scale.double().repeat_interleave(BLOCK, dim=1)[:, :cols]  # each column's block scale
    err = (back - t.double()).abs()
    # half a step, plus float32 rounding of w / s and of q * s
    # (a block whose largest |w| is below 127 float32 subnormals gets a scale of 0 and reads back 0: slack 2e-43)
    bound = step / 2 + 4 * np.finfo(np.float32).eps * t.double().abs() + 2e-43
    assert (err <= bound).all(), (err - bound).max()
    assert (back[t == 0] == 0).all()  # zero stays exactly zero


@FAST
@given(st.integers(1, 3), st.integers(1, 200))
def test_all_zero_rows(rows, cols):
    q, scale = quantize_rows(torch.zeros(rows, cols))
    assert (scale == 0).all() and (q == 0).all()
    assert (dequantize_rows(q, scale) == 0).all()


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4),
    max_leaves=20,
)
meta_keys = st.sampled_from(
    ["task", "name", "parameters", "metrics", "history", "recipe", "owner_note", "x", "épreuve"]
)


@pytest.fixture(scope="module")
def small():
    """An untrained tiny translator: the header does not care what the weights learned."""
    from tests.support.tiny import reverse_corpus, tiny_translator

    return tiny_translator(reverse_corpus(10))


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(meta_keys | st.text(max_size=10), json_values, max_size=6))
def test_header_round_trip(small, tmp_path, meta):
    """save then read_header gives back clean_meta(meta): what survives is exactly what the loader keeps."""
    tr = copy.copy(small)
    tr.meta = meta
    path = save(tr, tmp_path / "m.safetensors")
    header = read_header(path)
    assert header["meta"] == clean_meta(json.loads(json.dumps(meta)), "x")
    assert load_checkpoint(path).meta == header["meta"]
