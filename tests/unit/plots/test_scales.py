"""share_scales: figures of one kind (Both's two models) on one colour scale and one value axis."""

import numpy as np
import pytest

from attnviz.errors import InputError
from attnviz.plots import (
    attribution_heatmap,
    context_bar,
    context_heatmap,
    context_projection,
    explore_heatmap,
    links_figure,
    share_scales,
    step_animation,
    step_bar,
)
from tests.support.alignments import heatmaps, make_alignment

SRC, TGT = ["ein", "mann", "spielt"], ["a", "man", "plays", "guitar"]


def pair():
    a = make_alignment(SRC, TGT[:3], seed=1)
    b = make_alignment(SRC, TGT, seed=2)
    b.scores[:] = b.scores * 4 + 9  # another model's raw scores live elsewhere
    return a, b


def zrange(fig) -> tuple:
    return tuple((h.zmin, h.zmax) for h in heatmaps(fig))


@pytest.mark.parametrize("values", ["weights", "scores"])
def test_maps_of_both_models_get_the_union_of_their_colour_ranges(values):
    a, b = pair()
    figs = share_scales([explore_heatmap(a, values), explore_heatmap(b, values)])
    assert zrange(figs[0]) == zrange(figs[1])
    (lo, hi), *_ = zrange(figs[0])
    both = np.concatenate([np.ravel(getattr(al, values)) for al in (a, b)])
    if values == "weights":
        assert lo == 0 and hi == pytest.approx(both.max())
    else:  # a diverging scale stays centred on 0
        assert lo == pytest.approx(-np.abs(both).max()) and hi == pytest.approx(np.abs(both).max())
        assert all(h.zmid is None for f in figs for h in heatmaps(f))


def test_word_link_maps_and_attributions_share_one_scale_per_kind():
    a, b = pair()
    b.weights[0] = [1.0, 0, 0, 0]  # Luong's map tops at 1, Bahdanau's below
    links = [links_figure(al.weights, al.source_tokens, al.target_tokens, {}, "t") for al in (a, b)]
    share_scales(links)
    assert zrange(links[0]) == zrange(links[1]) == ((0.0, 1.0),)
    attrs = [attribution_heatmap(np.full(np.shape(al.weights), k + 1.0), al, "t") for k, al in enumerate((a, b))]
    share_scales(attrs)
    assert zrange(attrs[0]) == zrange(attrs[1]) == ((-2.0, 2.0),)


def test_per_step_raw_score_axes_share_one_range_and_the_weight_axis_stays():
    a, b = pair()
    figs = share_scales([step_bar(a, 1), step_bar(b, 1)], axes=("yaxis", "yaxis2"))
    r = [tuple(f.layout.yaxis2.range) for f in figs]
    assert r[0] == r[1]
    scores = np.concatenate([a.scores[1], b.scores[1]])
    assert r[0][0] < scores.min() and r[0][1] > scores.max()
    assert [tuple(f.layout.yaxis.range) for f in figs] == [(0, 1.05)] * 2
    bars = share_scales([context_bar(a, 1), context_bar(b, 1)], axes=("yaxis",))
    assert bars[0].layout.yaxis.range == bars[1].layout.yaxis.range
    anim = share_scales([step_animation(a), step_animation(b)], axes=("yaxis", "yaxis2"))
    assert anim[0].layout.yaxis2.range == anim[1].layout.yaxis2.range


def test_context_maps_and_projections_share_their_colour_scales():
    a, b = pair()
    b.contexts[:] = b.contexts * 3
    maps = share_scales([context_heatmap(a), context_heatmap(b)])
    assert zrange(maps[0]) == zrange(maps[1])
    assert zrange(maps[0])[0][0] == -zrange(maps[0])[0][1]
    proj = share_scales([context_projection(a), context_projection(b)])
    assert (proj[0].data[0].marker.cmin, proj[0].data[0].marker.cmax) == (0, len(b.target_tokens) - 1)
    assert (proj[1].data[0].marker.cmin, proj[1].data[0].marker.cmax) == (0, len(b.target_tokens) - 1)


def test_a_reversed_axis_stays_reversed_and_figures_of_two_kinds_are_refused():
    a, b = pair()
    figs = [explore_heatmap(a), explore_heatmap(b)]
    share_scales(figs, axes=("yaxis",))
    assert all(f.layout.yaxis.range[0] > f.layout.yaxis.range[1] for f in figs)
    with pytest.raises(InputError, match="same function"):
        share_scales([explore_heatmap(a), step_bar(b, 0)])
    with pytest.raises(InputError, match="layout axis"):
        share_scales([step_bar(a, 0)], axes=("y2",))
