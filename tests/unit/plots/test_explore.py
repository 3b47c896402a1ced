"""Explore's figures: coverage, maps fitted to narrow columns (titles, labels, colour bar),
side-by-side maps, the attribution map."""

import numpy as np
import pytest

from attnviz.plots.explore import coverage_bar
from tests.support.alignments import alignment_of, heatmaps, make_alignment


def test_coverage_is_the_column_sum_and_flags_dropped_and_repeated_words():
    weights = np.array([[0.9, 0.05, 0.05], [0.9, 0.05, 0.05], [0.1, 0.1, 0.8]])  # "a" read twice, "b" never
    al = alignment_of(weights, ["a", "b", "<eos>"], ["x", "y", "<eos>"], [False] * 3)
    assert np.allclose(al.coverage(), [1.9, 0.2, 0.9])
    assert al.to_dict()["coverage"] == pytest.approx([1.9, 0.2, 0.9])
    fig = coverage_bar(al)
    bar = fig.data[0]
    assert list(bar.y) == pytest.approx([1.9, 0.2, 0.9])
    assert bar.marker.color[0] != bar.marker.color[2] != bar.marker.color[1]  # repeated, normal, dropped
    assert list(fig.layout.xaxis.ticktext) == ["a", "b", "&lt;eos&gt;"]
    assert "1.900 in total over 3 steps" in bar.text[0]
    assert len(coverage_bar(make_alignment(["<b>x</b>"] * 30, ["y"] * 5)).data[0].y) == 31
    (marks,) = fig.data[1:]  # a word hardly read gets a mark on the axis: its bar is a pixel high
    assert list(marks.x) == [1] and list(marks.y) == [0.0] and marks.marker.color == bar.marker.color[1]
    assert fig.layout.title.text.startswith("Coverage: total") and fig.layout.showlegend is False
    assert coverage_bar(al, title="Coverage · Luong · <m>").layout.title.text == "Coverage · Luong · &lt;m&gt;"


def test_a_narrow_map_fits_its_long_title_instead_of_clipping_it():
    from attnviz.plots.explore import explore_heatmap
    from attnviz.plots.heatmap import CHAR_EM, MIN_TITLE_PX, TITLE_PX

    al = make_alignment(["a", "b"], ["x"])
    title = "multi30k-de-en-additive-bahdanau · additive / bahdanau (<eos> hidden, rows renormalised)"
    fig = explore_heatmap(al, "weights", title, max_width=430)
    size = fig.layout.title.font.size
    lines = fig.layout.title.text.split("<br>")
    assert MIN_TITLE_PX <= size < TITLE_PX
    assert all(
        len(line.replace("&lt;", "<").replace("&gt;", ">")) * size * CHAR_EM <= fig.layout.width for line in lines
    )
    assert "&lt;eos&gt;" in fig.layout.title.text  # entities kept whole
    short = explore_heatmap(al, "weights", "short").layout.title
    assert short.font.size is None and "<br>" not in short.text


def test_side_by_side_maps_start_at_one_height():
    from attnviz.plots.explore import align_tops, explore_heatmap

    al = make_alignment(["a", "b"], ["x"])
    short = explore_heatmap(al, "weights", "m", max_width=200)
    wrapped = explore_heatmap(al, "weights", "multi30k-en-de-additive-bahdanau · additive / bahdanau", max_width=200)
    assert wrapped.layout.margin.t > short.layout.margin.t  # the wrapped title took more room
    before = {id(f): (f.layout.margin.t, f.layout.height) for f in (short, wrapped)}
    align_tops([short, wrapped])
    assert short.layout.margin.t == wrapped.layout.margin.t == before[id(wrapped)][0]
    assert wrapped.layout.height == before[id(wrapped)][1]  # the taller one is unchanged
    grown = short.layout.height - before[id(short)][1]
    assert grown == short.layout.margin.t - before[id(short)][0] > 0  # the plot area keeps its size
    assert short.layout.title.font.size == wrapped.layout.title.font.size  # one title size side by side


def test_side_by_side_titles_share_the_smaller_font():
    from attnviz.plots.explore import align_tops, explore_heatmap

    al = make_alignment(list("abcdefghij"), list("xyz"))
    long, short = (
        explore_heatmap(al, "weights", f"multi30k-de-en-general-{s} · general / {s}", max_width=420)
        for s in ("bahdanau", "luong")
    )
    assert long.layout.title.font.size < (short.layout.title.font.size or 17)  # fitted to its width alone
    align_tops([long, short])
    assert long.layout.title.font.size == short.layout.title.font.size


def test_attribution_map_hover_names_the_attribution_and_the_attention():
    from attnviz.plots.explore import attribution_heatmap

    al = make_alignment(["a", "b"], ["x", "y"])
    values = np.arange(np.size(al.weights), dtype=float).reshape(np.shape(al.weights)) - 2  # [tgt, src]
    heat = heatmaps(attribution_heatmap(values, al, "ig"))[0]
    assert heat.customdata is None and heat.hovertemplate == "%{text}<extra></extra>"
    assert np.shape(heat.text) == np.shape(al.weights)
    text = heat.text[1][2]
    assert f"attribution {values[1, 2]:+.3g}" in text and f"attention {al.weights[1, 2]:.3f}" in text


def test_narrow_cells_get_smaller_upright_labels_that_do_not_overlap():
    """Both's two maps share a 1280-px page (columns of 394 px): where full-size labels would not
    fit, the colour bar moves under the map to give the cells its width, and the labels shrink with
    the cells (2 px under them, 12 down to 10 px), so upright labels do not print over each other."""
    from attnviz.plots.explore import explore_heatmap
    from attnviz.plots.heatmap import MIN_TICK_PX, TICK_PX
    from attnviz.plots.steps import step_bar

    sentence = "zwei junge männer in orangefarbenen westen reparieren mit schweren werkzeugen eine schiene neben"
    words = [*sentence.split(), "einer", "belebten", "kreuzung", "."]
    al = make_alignment(words, ["two", "young", "men", "repair", "a", "rail"])
    wide = explore_heatmap(al, "weights", "m", max_width=860)
    assert wide.layout.xaxis.tickfont.size == TICK_PX and wide.data[0].colorbar.orientation is None  # beside
    narrow = explore_heatmap(al, "weights", "m", max_width=390)
    assert narrow.layout.width <= 390 and narrow.data[0].colorbar.orientation == "h"  # under the map
    assert narrow.layout.xaxis.tickangle == -90
    assert MIN_TICK_PX <= narrow.layout.xaxis.tickfont.size == narrow.layout.yaxis.tickfont.size <= TICK_PX
    longer = explore_heatmap(make_alignment(words * 2, ["two", "men"]), "weights", "m", max_width=390)
    assert longer.layout.xaxis.tickfont.size == MIN_TICK_PX  # 35 columns: the smallest labels
    bars = step_bar(al, 0, max_width=390)
    assert bars.layout.width <= 390 and bars.layout.xaxis.tickfont.size < TICK_PX
    assert step_bar(al, 0).layout.xaxis.tickfont.size == TICK_PX  # unconstrained: full-size labels
    short = make_alignment(["ein", "mann", "mit", "hut", "."], ["a", "man"])
    natural, screen = step_bar(short, 0).layout.width, step_bar(short, 0, max_width=1460).layout.width
    assert natural < screen <= 1460 and screen <= 160 + 2 * (natural - 160)  # a wide column: up to twice the bars


def test_a_filling_map_grows_its_cells_to_its_column_and_stays_square():
    from attnviz.plots.explore import FILL_CELL_PX, explore_heatmap

    al = make_alignment(["the", "cat", "eats", "the", "fish"], ["le", "chat", "mange", "le", "poisson"])
    small = explore_heatmap(al, max_width=390, title="Bahdanau · toy · general / bahdanau")
    wide = explore_heatmap(al, max_width=740, fill=True, title="Bahdanau · toy · general / bahdanau")
    assert small.layout.width <= 390 and 600 <= wide.layout.width <= 740
    n_src, n_tgt = len(al.source_tokens), len(al.target_tokens)
    cell = (wide.layout.width - wide.layout.margin.l - 140) / n_src  # the plot area less the colour bar
    assert 60 <= cell <= FILL_CELL_PX
    plot_h = wide.layout.height - wide.layout.margin.t - wide.layout.margin.b
    assert plot_h == pytest.approx(n_tgt * cell, abs=25)  # square cells (the heatmap keeps 20 px of slack)
    assert (wide.layout.title.font.size or 17) >= 15  # a title that fits is not shrunk
