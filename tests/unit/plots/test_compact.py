"""Figures send the model's float32 numbers as float32 (attnviz.plots.compact): half the bytes, the same values."""

from __future__ import annotations

import base64
import dataclasses
import json

import numpy as np

from attnviz.plots import context_heatmap, explore_heatmap
from attnviz.plots.compact import exact_float32
from tests.support.alignments import make_alignment


def _float32(al):
    """``al`` with float32 weights, scores and context vectors, as a model gives them."""
    return dataclasses.replace(
        al,
        weights=al.weights.astype(np.float32),
        scores=al.scores.astype(np.float32),
        contexts=al.contexts.astype(np.float32),
    )


def _arrays(fig) -> dict[str, tuple[str, np.ndarray]]:
    """Each heatmap property sent as binary data: its dtype and its values as the browser decodes them."""
    (heat,) = [t for t in json.loads(fig.to_json())["data"] if t["type"] == "heatmap"]
    out = {}
    for name in ("z", "customdata"):
        spec = heat.get(name)
        if isinstance(spec, dict) and "bdata" in spec:
            out[name] = (spec["dtype"], np.frombuffer(base64.b64decode(spec["bdata"]), dtype=spec["dtype"]))
    return out


def test_a_models_numbers_go_as_float32_and_arrive_unchanged():
    al = _float32(make_alignment(["a", "b", "c", "d"], ["x", "y", "z"]))
    for values, shown, other in (("weights", al.weights, al.scores), ("scores", al.scores, al.weights)):
        sent = _arrays(explore_heatmap(al, values))
        assert sent["z"][0] == sent["customdata"][0] == "f4", sent
        np.testing.assert_array_equal(sent["z"][1], shown.ravel())  # the very same numbers, not rounded
        np.testing.assert_array_equal(sent["customdata"][1], other.ravel())
    dtype, values = _arrays(context_heatmap(al))["z"]
    assert dtype == "f4" and np.array_equal(values, al.contexts.ravel())


def test_numbers_float32_would_change_stay_float64():
    al = make_alignment(["a", "b"], ["x"])  # float64 numbers that float32 would round
    assert _arrays(explore_heatmap(al))["z"][0] == "f8"
    assert exact_float32(np.array([0.1])) is None and exact_float32([0.5]) is None
    narrow = exact_float32(np.array([0.5, np.nan, -np.inf]))  # a local window's blank cells
    assert narrow is not None and narrow.dtype == np.float32
