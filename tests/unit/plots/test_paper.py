"""The figure for a paper: every map in one figure on one colour scale, with the sentence, the
models and their styles (its files: test_images.py)."""

import numpy as np
import pytest

from attnviz.errors import InputError
from attnviz.plots.paper import paper_figure
from tests.support.alignments import heatmaps, make_alignment


def pair():
    a = make_alignment(["the", "cat", "eats"], ["le", "chat", "mange"], seed=1)
    b = make_alignment(["the", "cat", "eats"], ["le", "chat"], seed=2)
    b.weights = b.weights * 0.5  # a smaller maximum: the scale must still reach a's
    return {"Bahdanau": a, "Luong": b}


MODELS = {"Bahdanau": "toy-fr-general-bahdanau · general / bahdanau", "Luong": "toy-fr-general-luong · general / luong"}


def test_both_maps_share_one_colour_axis_and_carry_sentence_models_and_styles():
    panels = pair()
    fig = paper_figure(panels, MODELS, "the cat eats", note="<eos> hidden")
    hs = heatmaps(fig)
    assert len(hs) == 2 and all(h.coloraxis == "coloraxis" for h in hs)
    axis = fig.layout.coloraxis
    assert axis.cmin == 0 and axis.cmax == pytest.approx(panels["Bahdanau"].weights.max())
    assert "the cat eats" in fig.layout.title.text
    texts = [a.text for a in fig.layout.annotations]
    assert any("Bahdanau" in t and "general / bahdanau" in t for t in texts)
    assert any("Luong" in t and "general / luong" in t for t in texts)
    assert any("&lt;eos&gt; hidden" in t for t in texts)  # the note, escaped


def test_square_equal_cells_and_a_grid_for_many_models():
    panels = pair()
    fig = paper_figure(panels, MODELS, "the cat eats")
    x1, x2 = fig.layout.xaxis.domain, fig.layout.xaxis2.domain
    assert x1[1] - x1[0] == pytest.approx(x2[1] - x2[0])  # same width: same cells
    assert list(fig.layout.yaxis.range) == list(fig.layout.yaxis2.range)  # rows line up, shorter maps end early
    four = {f"m{k}": make_alignment(["a", "b"], ["x"], seed=k) for k in range(4)}
    grid = paper_figure(four, {n: n for n in four}, "a b", columns=2)
    assert len(heatmaps(grid)) == 4 and grid.layout.yaxis3.domain[1] < grid.layout.yaxis.domain[0]


def test_scores_use_a_symmetric_range_and_bad_input_says_how_to_fix():
    fig = paper_figure(pair(), MODELS, "x", values="scores")
    assert fig.layout.coloraxis.cmin == -fig.layout.coloraxis.cmax
    with pytest.raises(InputError, match="model line"):
        paper_figure(pair(), {"Bahdanau": "m"}, "x")
    with pytest.raises(InputError, match="at least one"):
        paper_figure({}, {}, "x")


def test_attributions_go_beside_attention_on_a_second_symmetric_colour_bar():
    panels = pair()
    attrs = {n: np.linspace(-1.0, 2.0, al.weights.size).reshape(al.weights.shape) for n, al in panels.items()}
    fig = paper_figure(panels, MODELS, "the cat eats", attributions=attrs, method="integrated gradients")
    hs = heatmaps(fig)
    assert [h.coloraxis for h in hs] == ["coloraxis", "coloraxis2"] * 2  # a row per style: attention, attribution
    assert np.array_equal(np.asarray(hs[1].z, dtype=float), attrs["Bahdanau"])
    assert fig.layout.coloraxis.cmin == 0 and fig.layout.coloraxis2.cmin == -2.0 == -fig.layout.coloraxis2.cmax
    assert fig.layout.coloraxis2.colorbar.title.text == "integrated gradients"
    bars = fig.layout.coloraxis.colorbar, fig.layout.coloraxis2.colorbar
    assert bars[0].y - bars[0].len >= bars[1].y + bars[1].len  # one above the other, not overlapping
    texts = [a.text for a in fig.layout.annotations]
    assert any("Luong · integrated gradients" in t and "general / luong" in t for t in texts)
    assert any("Bahdanau · attention" in t for t in texts)
    assert fig.layout.yaxis3.domain[1] < fig.layout.yaxis.domain[0]  # Luong's row under Bahdanau's
    with pytest.raises(InputError, match="do not match"):
        paper_figure(panels, MODELS, "x", attributions={**attrs, "Luong": attrs["Bahdanau"]})
    with pytest.raises(InputError, match="no attributions for panel 'Luong'"):
        paper_figure(panels, MODELS, "x", attributions={"Bahdanau": attrs["Bahdanau"]})
    with pytest.raises(InputError, match="values='weights'"):
        paper_figure(panels, MODELS, "x", values="scores", attributions=attrs)
