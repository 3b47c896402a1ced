"""The browser cursor's data (attnviz.plots.cursor): cell, charts and tokens; the numbers are the maps' own."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnviz.decoding.trace import Alignment
from attnviz.errors import InputError
from attnviz.plots.cursor import CELL_COLOR, cursor_data


def _al(n_tgt: int, n_src: int, local: bool = False) -> Alignment:
    rng = np.random.default_rng(n_tgt)
    scores = rng.normal(size=(n_tgt, n_src))  # [tgt, src]
    if local:
        scores[:, 0] = -np.inf  # outside a local window
    weights = np.exp(scores - scores.max(1, keepdims=True))
    weights /= weights.sum(1, keepdims=True)
    src = ["a b", "<b>", ""][:n_src] + [f"s{j}" for j in range(max(0, n_src - 3))]
    return Alignment(
        source_tokens=src,
        target_tokens=[f"t{i}" for i in range(n_tgt)],
        weights=weights,
        scores=scores,
        contexts=np.zeros((n_tgt, 2)),
        states=np.zeros((n_tgt, 2)),
        source_unknown=[False] * n_src,
        score="general",
        style="luong",
    )


def test_tokens_and_cell_json_ready_with_no_numbers():
    al = _al(4, 5, local=True)
    data = cursor_data({"Luong": al}, (2, 3), {"Luong": "explore_heat_weights_Luong"})
    json.dumps(data, allow_nan=False)
    (panel,) = data["panels"]
    assert data["cell"] == [2, 3] and data["charts"] == ["explore_heat_weights_Luong"] and data["color"] == CELL_COLOR
    assert data["values"] == "weights" and cursor_data({"L": al}, (0, 0), {"L": "k"}, "scores")["values"] == "scores"
    assert set(panel) == {"name", "source", "target"}  # the weights and scores are read from the map's z/customdata
    assert panel["source"][:3] == ["a␣b", "<b>", "∅"]  # as the axis reads, not HTML-escaped (set as text)
    with pytest.raises(InputError, match="values"):
        cursor_data({"L": al}, (0, 0), {"L": "k"}, "contexts")


def test_its_size_grows_with_the_tokens_not_the_cells():
    """A 60x60 map's cursor is the 120 tokens and a few keys: the 3,600 cells' numbers, 34-95 kB a
    rerun on a long sentence, are already in the figure."""
    small, big = _al(6, 6), _al(60, 60)
    size = {n: len(json.dumps(cursor_data({"Luong": al}, (0, 0), {"Luong": "k"}))) for n, al in ((6, small), (60, big))}
    tokens = len(json.dumps([big.source_tokens, big.target_tokens]))
    assert size[60] - size[6] < tokens, size


def test_a_cell_on_the_longer_translation_only_is_kept():
    short, long = _al(3, 4), _al(6, 4)
    keys = {"Bahdanau": "b", "Luong": "l"}
    data = cursor_data({"Bahdanau": short, "Luong": long}, (5, 1), keys)
    assert [len(p["target"]) for p in data["panels"]] == [3, 6] and data["charts"] == ["b", "l"]
    with pytest.raises(InputError, match="outside every map"):
        cursor_data({"Bahdanau": short, "Luong": long}, (6, 1), keys)
    with pytest.raises(InputError, match="No chart key"):
        cursor_data({"Bahdanau": short, "Luong": long}, (0, 0), {"Luong": "l"})
