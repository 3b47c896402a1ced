"""int8 weight storage: the round trip within one quantisation step a row, the dequantized model is
the one loaded, drop_owner keeps the storage, and a damaged scale is refused with a clear message."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.torch import save_file

from attnviz.errors import CheckpointError
from attnviz.store import drop_owner, load_checkpoint, read_header, save, stored_as
from attnviz.store.quantize import (
    BLOCK,
    LEVELS,
    SCALE_SUFFIX,
    dequantize_rows,
    encode_weights,
    quantize_rows,
    scale_shape,
)
from attnviz.training import Recipe
from tests.support.tiny import tiny_translator


@pytest.fixture
def int8_file(corpus, tmp_path):
    tr = tiny_translator(corpus, score="general", style="luong")
    return tr, save(tr, tmp_path / "q.safetensors", store="int8")


def test_blocks_round_trip_within_half_a_step():
    cols = BLOCK * 2 + 5  # two whole blocks and a short one
    w = torch.randn(7, cols) * torch.logspace(-3, 1, 7)[:, None]  # rows of very different sizes
    w[3] = 0.0  # an all-zero row stays zero
    w[5, :BLOCK] *= 1000  # one loud block does not coarsen the rest of its row
    q, scale = quantize_rows(w)
    assert q.dtype == torch.int8 and list(scale.shape) == scale_shape(w.shape) == [7, 3]
    assert int(q.abs().max()) <= LEVELS
    back = dequantize_rows(q, scale)
    step = scale.repeat_interleave(BLOCK, dim=1)[:, :cols]  # [rows, cols]: each value's quantisation step
    assert torch.all((back - w).abs() <= step / 2 + 1e-6 * w.abs())
    assert torch.equal(back[3], torch.zeros(cols))
    assert scale[5, 0] > 100 * scale[5, 1]
    for b in range(3):  # each block's largest value is exact
        block = slice(b * BLOCK, (b + 1) * BLOCK)
        assert torch.allclose(back[:, block].abs().amax(dim=1), w[:, block].abs().amax(dim=1))


def test_a_three_dimensional_weight_keeps_its_shape():
    w = torch.randn(4, 3, 50)
    q, scale = quantize_rows(w)
    assert q.shape == w.shape and list(scale.shape) == [4, 3]
    assert torch.allclose(dequantize_rows(q, scale), w, atol=float(scale.max()))


def test_matrices_are_int8_and_biases_float16():
    state = {"m.weight": torch.randn(4, 3), "m.bias": torch.randn(4)}
    out = encode_weights(state, "int8")
    assert out["m.weight"].dtype == torch.int8 and out["m.weight" + SCALE_SUFFIX].dtype == torch.float32
    assert out["m.bias"].dtype == torch.float16 and set(out) == {"m.weight", "m.weight" + SCALE_SUFFIX, "m.bias"}


def test_an_int8_checkpoint_loads_the_dequantized_model(int8_file):
    tr, path = int8_file
    back = load_checkpoint(path)
    assert read_header(path)["format_version"] == 3 and stored_as(path) == "int8"
    assert next(back.model.parameters()).dtype == torch.float32
    for name, weight in tr.model.state_dict().items():
        loaded = back.model.state_dict()[name]
        if weight.dim() >= 2:
            q, scale = quantize_rows(weight)
            assert torch.equal(loaded, dequantize_rows(q, scale))  # exactly what the file stands for
        else:
            assert torch.equal(loaded, weight.half().float())
    a, b = tr.translate("a b c d"), back.translate("a b c d")
    assert a.target_tokens == b.target_tokens
    assert np.abs(a.weights - b.weights).max() < 0.05


def test_int8_is_smaller_than_float16(corpus, tmp_path):
    tr = tiny_translator(corpus, emb_dim=64, hidden_dim=64, attn_dim=64)
    sizes = {s: save(tr, tmp_path / f"{s}.safetensors", store=s).stat().st_size for s in ("fp32", "fp16", "int8")}
    assert sizes["int8"] < 0.6 * sizes["fp16"] < 0.6 * sizes["fp32"]


def test_saving_a_dequantized_model_again_is_stable(int8_file, tmp_path):
    _, path = int8_file
    once = load_checkpoint(path)
    twice = load_checkpoint(save(once, tmp_path / "again.safetensors", store="int8"))
    for name, weight in once.model.state_dict().items():
        assert torch.allclose(weight, twice.model.state_dict()[name], atol=1e-6)


def test_drop_owner_keeps_int8(corpus, tmp_path):
    tr = tiny_translator(corpus)
    tr.meta["owner"] = "s1"
    path = save(tr, tmp_path / "mine.safetensors", store="int8")
    drop_owner(path, "s1")
    assert stored_as(path) == "int8" and "owner" not in read_header(path)["meta"]


def _rewrite(path, tmp_path, change):
    with safe_open(str(path), framework="pt") as f:
        tensors = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118
        metadata = f.metadata()
    change(tensors)
    out = tmp_path / "edited.safetensors"
    save_file(tensors, out, metadata=metadata)
    return out


EMB = "decoder.embedding.weight"
SCALE = EMB + SCALE_SUFFIX


def _nan_scale(t):
    t[SCALE] = torch.full_like(t[SCALE], float("nan"))


def _negative_scale(t):
    t[SCALE] = -t[SCALE]


def _missing_scale(t):
    del t[SCALE]


def _short_scale(t):
    t[SCALE] = torch.ones(2)


def _integer_scale(t):
    t[SCALE] = torch.ones(t[EMB].shape[0], dtype=torch.int32)


def _orphan_scale(t):
    t["encoder.nothing" + SCALE_SUFFIX] = torch.ones(3)


def _integer_bias(t):
    bias = next(name for name, w in t.items() if w.dim() == 1 and not name.endswith(SCALE_SUFFIX))
    t[bias] = t[bias].to(torch.int32)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_nan_scale, "negative, NaN or infinite"),
        (_negative_scale, "negative, NaN or infinite"),
        (_missing_scale, "scale .* is missing"),
        (_short_scale, "not one float per block"),
        (_integer_scale, "not one float per block"),
        (_orphan_scale, "not int8 weights"),
        (_integer_bias, "stored as I32"),
    ],
)
def test_a_damaged_scale_is_refused_with_a_clear_message(int8_file, tmp_path, change, message):
    _, path = int8_file
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(_rewrite(path, tmp_path, change))


def _one_scale_a_row(t) -> dict:
    """The layout of the first int8 files attnviz wrote (checkpoint format 3 too): one float32 scale a
    row, shape [rows]. Returns the weights such a file stands for."""
    wanted = {}
    for scale in [k for k in t if k.endswith(SCALE_SUFFIX)]:
        name = scale.removesuffix(SCALE_SUFFIX)
        w = dequantize_rows(t[name], t[scale]).reshape(t[name].shape[0], -1)  # [rows, cols]
        row_scale = (w.abs().amax(1) / 127).clamp_min(1e-12)  # [rows]
        q = torch.round(w / row_scale[:, None]).clamp(-127, 127).to(torch.int8)
        t[name], t[scale] = q.reshape(t[name].shape), row_scale
        wanted[name] = (q.float() * row_scale[:, None]).reshape(t[name].shape)
    return wanted


def test_an_int8_file_with_one_scale_a_row_is_read(int8_file, tmp_path):
    _, path = int8_file
    wanted = {}
    edited = _rewrite(path, tmp_path, lambda t: wanted.update(_one_scale_a_row(t)))
    state = load_checkpoint(edited).model.state_dict()
    assert wanted and all(torch.equal(state[name], w) for name, w in wanted.items())


def test_unknown_storage_is_refused(corpus, tmp_path):
    with pytest.raises(CheckpointError, match="fp32, fp16, int8"):
        save(tiny_translator(corpus), tmp_path / "x.safetensors", store="int4")


def test_recipes_read_the_older_half_flag():
    base = {"name": "r", "data": "toy-fr"}
    assert Recipe.from_dict({**base, "half": True}).store == "fp16"
    assert Recipe.from_dict({**base, "half": False}).store == "fp32"
    assert Recipe.from_dict({**base, "store": "int8"}).store == "int8"
    assert "half" not in json.dumps(Recipe.from_dict({**base, "half": True}).to_dict())


def test_as_stored_gives_the_weights_the_saved_file_loads(int8_file):
    from attnviz.store import as_stored

    tr, path = int8_file
    in_memory = as_stored(tr, "int8")
    loaded = load_checkpoint(path)
    for name, weight in in_memory.model.state_dict().items():
        assert torch.equal(weight, loaded.model.state_dict()[name])


@pytest.mark.parametrize(
    ("store", "weight"),
    [
        ("int8", [[3.4028235e38, 1.0]]),  # float32's largest: its scale times 127 overflows
        ("fp16", [[7e4, 1.0]]),  # beyond float16's 65504
        ("int8", [7e4, 1.0]),  # a bias, kept as float16 under int8
    ],
)
def test_a_weight_a_storage_would_read_back_as_infinity_is_refused_at_save(store, weight):
    with pytest.raises(CheckpointError, match=rf"weight w holds values as large as .*{store} storage cannot keep"):
        encode_weights({"w": torch.tensor(weight)}, store)
    assert encode_weights({"w": torch.tensor([[3e38, 1.0]])}, "int8")  # large but kept
