"""Comparison figures: maps on one scale, differences, entropy and Jensen-Shannon plots, encoder
self-attention."""

import math

import numpy as np
import pytest

from attnviz.errors import InputError
from attnviz.plots.compare import (
    compare_heatmaps,
    difference_heatmap,
    encoder_attention_heatmaps,
    entropy_plot,
    js_plot,
)
from attnviz.plots.heatmap import TEXT_COLOUR, display_tokens
from tests.support.alignments import heatmaps, make_alignment


def test_compare_heatmaps_share_scale_and_one_colorbar():
    a = make_alignment(["a", "b", "c"], ["x", "y"], seed=1)
    b = make_alignment(["a", "b", "c"], ["x", "y", "z"], seed=2)
    fig = compare_heatmaps({"bahdanau": a, "luong <dot>": b})
    hs = heatmaps(fig)
    assert len(hs) == 2
    assert hs[0].zmin == hs[1].zmin == 0.0
    assert hs[0].zmax == hs[1].zmax == pytest.approx(max(a.weights.max(), b.weights.max()))
    assert [bool(h.showscale) for h in hs] == [False, True]
    assert list(fig.layout.xaxis2.ticktext) == display_tokens(b.source_tokens)
    assert list(fig.layout.yaxis2.ticktext) == display_tokens(b.target_tokens)
    assert "luong &lt;dot&gt;" in [ann.text for ann in fig.layout.annotations]
    scores = heatmaps(compare_heatmaps({"a": a, "b": b}, values="scores"))
    assert scores[0].zmin == scores[1].zmin == -scores[0].zmax


def test_difference_of_identical_alignments_is_zero():
    a = make_alignment(["a", "b"], ["x", "y"])
    fig = difference_heatmap(a, a)
    assert np.allclose(np.asarray(fig.data[0].z), 0.0)
    assert fig.data[0].zmin == -fig.data[0].zmax
    b = make_alignment(["a", "b"], ["x", "y"], seed=3)
    z = np.asarray(difference_heatmap(a, b).data[0].z)
    assert np.allclose(z, a.weights - b.weights)


def test_step_comparisons_need_the_same_grid():
    a = make_alignment(["a", "b"], ["x", "y"])
    with pytest.raises(InputError, match="forced decoding"):
        difference_heatmap(a, make_alignment(["a", "b"], ["x"]))
    with pytest.raises(InputError, match="different source"):
        js_plot(a, make_alignment(["a", "c"], ["x", "y"]))


def test_entropy_and_js_plots():
    a = make_alignment(["a", "b", "c"], ["x", "y"], seed=1)
    b = make_alignment(["a", "b", "c"], ["x", "z"], seed=2)
    fig = entropy_plot({"A": a, "B": b})
    assert len(fig.data) == 2 and np.allclose(fig.data[0].y, a.entropy())
    assert fig.layout.shapes[0].y0 == pytest.approx(math.log(4))
    styles = {(t.line.dash, t.marker.symbol) for t in entropy_plot({str(k): a for k in range(6)}).data}
    assert len(styles) == 6  # each line its dash and marker, told apart without colour
    js = js_plot(a, a)
    assert np.allclose(js.data[0].y, 0.0)
    assert "y / z" in list(js_plot(a, b).layout.xaxis.ticktext)


def test_every_figures_words_are_dark_on_every_axis():
    """The figure's own text colour (10.6:1 on white), on each subplot's tick labels too: Streamlit's
    theme otherwise greys the words on the axes to 3.7:1."""
    a = make_alignment(["a", "b", "c"], ["x", "y"], seed=1)
    for fig in (compare_heatmaps({"A": a, "B": a}), entropy_plot({"A": a}), js_plot(a, a)):
        axes = [*fig.select_xaxes(), *fig.select_yaxes()]
        assert axes and {ax.tickfont.color for ax in axes} == {TEXT_COLOUR}
        assert {ax.title.font.color for ax in axes if ax.title.text} <= {TEXT_COLOUR}  # and the axes' titles
        assert fig.layout.font.color == TEXT_COLOUR


def test_encoder_attention_grid_and_single():
    ea = np.full((2, 3, 4, 4), 0.25)  # [layers, heads, src, src]
    al = make_alignment(["a", "b", "c"], ["x"], encoder_attention=ea)
    assert len(heatmaps(encoder_attention_heatmaps(al))) == 6
    assert len(heatmaps(encoder_attention_heatmaps(al, layer=1))) == 3
    assert len(heatmaps(encoder_attention_heatmaps(al, layer=1, head=2))) == 1
    with pytest.raises(InputError, match="layer"):
        encoder_attention_heatmaps(al, layer=2)
    with pytest.raises(InputError, match="no Transformer encoder"):
        encoder_attention_heatmaps(make_alignment(["a"], ["x"]))
