"""Both draws every kind of map of its two models on one scale: the same zmin/zmax for the same
kind of heatmap, the same colour range for coloured markers, the same range on every value axis
(AppTest, tiny models)."""

from __future__ import annotations

import json
import re
from collections import defaultdict

import pytest

from tests.support.app import TEXT, start

REFERENCE = "la fille voit le chat ."
CASES = {  # view: extra session state
    "Weights": {"explore_coverage_open": True},
    "Raw scores": {},
    "Per step": {"explore_step": 2},
    "Context vectors": {},
    "Attribution": {},
    "Beam search": {},
    "What-if": {},
    "Alignment": {},
    "Alignment gold": {"explore_align_part": "gold"},
}


def kinds(at) -> dict[str, list[dict]]:
    """The charts by kind: their key with the panel's name taken out."""
    out = defaultdict(list)
    for chart in at.get("plotly_chart"):
        kind = re.sub(r"Bahdanau|Luong", "*", chart.proto.id.split("-", 2)[-1])
        out[kind].append(json.loads(chart.proto.spec))
    return out


def scales(fig: dict) -> tuple[list, dict]:
    """Its colour ranges (each heatmap's and each marker colour bar's) and, for a chart of values
    (no colour scale), the range of every y axis."""
    colours = [(d.get("zmin"), d.get("zmax")) for d in fig["data"] if d["type"] == "heatmap"]
    markers = [d["marker"] for d in fig["data"] if d["type"] == "scatter" and d.get("marker", {}).get("showscale")]
    colours += [(m.get("cmin"), m.get("cmax")) for m in markers]
    axes = {} if colours else {k: v.get("range") for k, v in fig["layout"].items() if k.startswith("yaxis")}
    return colours, axes


@pytest.mark.parametrize("case", list(CASES))
def test_every_kind_of_map_in_both_shares_one_scale(app_env, case):
    view = case.split()[0]
    state = {"explore_beam": 3, "explore_align_reference": REFERENCE, "explore_replace_word": "dog", **CASES[case]}
    at = start(explore_style="both", explore_text=TEXT, explore_view=view, **state)
    assert not at.exception, at.exception
    pairs = {kind: figs for kind, figs in kinds(at).items() if "*" in kind}
    assert pairs, f"{case}: no chart drawn for both models"
    for kind, figs in pairs.items():
        assert len(figs) == 2, kind
        (colours, axes), (other_colours, other_axes) = (scales(f) for f in figs)
        assert colours == other_colours, kind  # one colour range per kind of map
        assert all(None not in r for r in colours), kind  # set, not left to each figure's data
        assert axes == other_axes, kind
        assert all(r is not None for r in axes.values()), kind
        if kind.startswith(("explore_align", "explore_gold")):  # side by side: one title size, one plot top
            tops = {(f["layout"]["title"].get("font", {}).get("size"), f["layout"]["margin"]["t"]) for f in figs}
            assert len(tops) == 1, kind
