"""The layer x head grid: its colour scale choice, its word ticks where the cells leave room, a width that
fills the column, titles that fit, every tied best head in bold, a click's head in each cell's data."""

import json

import numpy as np
import pytest

from attnviz.errors import InputError
from attnviz.plots.heads import GRID_SCALES, GRID_TITLE, grid_layout, heads_grid
from attnviz.plots.heatmap import CHAR_EM, display_tokens
from tests.support.alignments import heatmaps

SRC = ["the", "black", "cat", "eats", "the", "<b>", "apple", "."]
TGT = ["le", "chat", "noir", "mange", "la", "pomme", "."]


def stack(layers: int, heads: int, seed: int = 0) -> np.ndarray:
    """Random ``[layers, heads, tgt, src]`` attention, rows summing to one."""
    return np.random.default_rng(seed).dirichlet(np.ones(len(SRC)), size=(layers, heads, len(TGT)))


def diffuse() -> np.ndarray:
    """Two heads: one sharp (a 0.9 per row), one diffuse (every weight between 0.1 and 0.2)."""
    sharp = np.full((len(TGT), len(SRC)), 0.1 / (len(SRC) - 1))
    sharp[np.arange(len(TGT)), np.arange(len(TGT))] = 0.9
    flat = np.full((len(TGT), len(SRC)), 0.1)
    flat[:, :2] = 0.2
    return np.stack([sharp, flat])[None]  # [1 layer, 2 heads, tgt, src]


def test_per_map_scale_gives_a_diffuse_head_the_whole_colour_range():
    fig = heads_grid(diffuse(), SRC, TGT, scale="map")
    sharp, flat = (np.asarray(h.z) for h in heatmaps(fig))
    assert fig.layout.coloraxis.cmin == 0 and fig.layout.coloraxis.cmax == 1
    assert sharp.max() == pytest.approx(1) and flat.max() == pytest.approx(1)
    assert flat.min() == pytest.approx(0.5)  # 0.1 of 0.2: half the scale, where a fixed 0..1 scale gives 0.1..0.2
    assert "its max" in fig.layout.coloraxis.colorbar.ticktext


def test_shared_and_fixed_scales_colour_the_weights_themselves():
    w = diffuse()
    grid = heads_grid(w, SRC, TGT, scale="grid")
    fixed = heads_grid(w, SRC, TGT, scale="fixed")
    assert grid.layout.coloraxis.cmax == pytest.approx(0.9) and fixed.layout.coloraxis.cmax == 1
    for fig in (grid, fixed):
        assert [np.asarray(h.z).tolist() for h in heatmaps(fig)] == [w[0, 0].tolist(), w[0, 1].tolist()]
        assert fig.layout.coloraxis.colorbar.title.text == "weight"
    with pytest.raises(InputError, match="scale must be one of"):
        heads_grid(w, SRC, TGT, scale="log")
    assert GRID_SCALES == ("map", "grid", "fixed")


def test_the_hover_carries_the_raw_weight_whatever_the_scale():
    w = diffuse()
    fig = heads_grid(w, SRC, TGT, scale="map")
    flat = [t for t in fig.data if t.type == "scatter"][1]
    data = np.asarray(flat.customdata)  # [cells, (layer, head, weight)]
    assert data[:, :2].tolist() == [[0, 1]] * (len(SRC) * len(TGT))
    assert data[:, 2].max() == pytest.approx(0.2)
    assert "chat → black" in flat.text
    sent = json.loads(fig.to_json())["data"][3]["customdata"]  # what a click hands back to the server
    assert isinstance(sent, list) and sent[0][:2] == [0, 1]


def test_words_are_ticks_on_the_outer_maps_where_the_cells_have_room():
    fig = heads_grid(stack(3, 4), SRC, TGT, max_width=1400)
    assert grid_layout(3, 4, SRC, TGT, 1400).ticks
    bottom_row = [fig.layout[f"xaxis{k}"] for k in range(9, 13)]
    assert all(list(a.ticktext) == display_tokens(SRC) for a in bottom_row)
    assert "&lt;b&gt;" in bottom_row[0].ticktext  # escaped: tick text interprets HTML
    first_column = [fig.layout["yaxis" + ("" if k == 1 else str(k))] for k in (1, 5, 9)]
    assert all(list(a.ticktext) == display_tokens(TGT) for a in first_column)
    inner = [fig.layout["xaxis"], fig.layout["yaxis2"]]
    assert all(a.showticklabels is False for a in inner)


def test_no_ticks_where_the_cells_are_too_small_and_the_hover_still_names_the_words():
    fig = heads_grid(stack(2, 16), SRC, TGT, max_width=780)
    assert not grid_layout(2, 16, SRC, TGT, 780).ticks
    assert not any(fig.layout[f"xaxis{k}"].showticklabels for k in (2, 32))
    assert "le → the" in next(t for t in fig.data if t.type == "scatter").text


@pytest.mark.parametrize("width", [750, 1100, 1420])
def test_the_grid_fills_the_width_it_is_given_and_its_height_follows(width):
    fig = heads_grid(stack(3, 4), SRC, TGT, max_width=width)
    assert width - 8 <= fig.layout.width <= width
    assert fig.layout.height == pytest.approx(3 * width / 4 * len(TGT) / len(SRC), rel=0.35)


def test_the_titles_are_never_cut():
    for layers, heads, width in [(3, 4, 750), (6, 8, 750), (16, 16, 750), (2, 2, 1420)]:
        aer = np.random.default_rng(1).random((layers, heads))
        fig = heads_grid(stack(layers, heads), SRC, TGT, aer, max_width=width)
        shape = grid_layout(layers, heads, SRC, TGT, width, scored=True)
        font = fig.layout.title.font.size
        assert fig.layout.title.text == GRID_TITLE and len(GRID_TITLE) * CHAR_EM * font <= fig.layout.width - 30
        for note in fig.layout.annotations:
            lines = note.text.replace("<b>", "").replace("</b>", "").split("<br>")
            assert max(len(line) for line in lines) * CHAR_EM * note.font.size <= shape.map_width, note.text


def test_every_head_of_the_lowest_aer_is_bold_and_the_chosen_one_outlined():
    aer = np.array([[0.5, 0.2, 0.7], [0.2, np.nan, 0.4]])
    fig = heads_grid(stack(2, 3), SRC, TGT, aer, chosen=(1, 2))
    titles = [a.text for a in fig.layout.annotations]
    assert [t for t in titles if t.startswith("<b>")] == ["<b>L0 H1 · 0.20</b>", "<b>L1 H0 · 0.20</b>"]
    assert titles[4] == "L1 H1"  # not scored
    (box,) = fig.layout.shapes
    assert (box.xref, box.yref) == ("x6", "y6")


def test_a_stack_that_does_not_fit_the_words_is_refused():
    with pytest.raises(InputError, match=r"expected a \[layers, heads, 7, 8\] stack"):
        heads_grid(np.zeros((2, 2, 3, 3)), SRC, TGT)
