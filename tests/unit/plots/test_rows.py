"""Maps compared in rows: as many side by side as stay readable in the width, one colour scale and one
colour bar, titles wrapped to their map, every map with its own word ticks."""

import pytest

from attnviz.errors import InputError
from attnviz.plots.heatmap import display_tokens
from attnviz.plots.rows import READABLE_CELL_PX, heatmap_rows, per_row
from tests.support.alignments import heatmaps, make_alignment

SRC = ["the", "black", "cat", "eats", "the", "red", "apple", "."]
TGT = ["le", "chat", "noir", "mange", "la", "pomme", "rouge", "."]


def four() -> dict:
    return {f"layer {k}, head {k + 1}": make_alignment(SRC, TGT, seed=k) for k in range(4)}


@pytest.mark.parametrize(("width", "across"), [(786, 2), (1460, 4), (400, 1)])
def test_maps_wrap_to_rows_that_fit_the_width(width, across):
    maps = four()
    assert per_row(list(maps.values()), width) == across
    fig = heatmap_rows(maps, width)
    assert fig.layout.width <= width
    domains = sorted({tuple(fig.layout[name].domain) for name in fig.layout if name.startswith("xaxis")})
    assert len(domains) == across
    cell = (
        (domains[0][1] - domains[0][0])
        * (fig.layout.width - fig.layout.margin.l - fig.layout.margin.r)
        / len([*SRC, "<eos>"])
    )
    assert cell >= READABLE_CELL_PX or across == 1


def test_one_colour_scale_and_one_colour_bar():
    maps = four()
    hs = heatmaps(heatmap_rows(maps, 786))
    assert len(hs) == 4 and sum(bool(h.showscale) for h in hs) == 1
    top = max(al.weights.max() for al in maps.values())
    assert all(h.zmin == 0 and h.zmax == pytest.approx(top) for h in hs)


def test_every_map_keeps_its_words_and_its_title_wraps():
    maps = {
        "a very long name of the attention shown, which wraps <b>": make_alignment(SRC, TGT),
        "b": make_alignment(SRC, TGT),
    }
    fig = heatmap_rows(maps, 786)
    assert list(fig.layout.xaxis2.ticktext) == display_tokens([*SRC, "<eos>"])
    assert list(fig.layout.yaxis2.ticktext) == display_tokens([*TGT, "<eos>"])
    title = fig.layout.annotations[0].text
    assert "<br>" in title and "&lt;b&gt;" in title


def test_nothing_to_compare_is_refused():
    with pytest.raises(InputError, match="at least one alignment"):
        heatmap_rows({}, 800)
