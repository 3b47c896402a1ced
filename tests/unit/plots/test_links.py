"""Link figures: link kinds by the AER sets, the links and gold figures."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.errors import InputError
from attnviz.plots.links import KIND_NAMES, gold_figure, link_kinds, links_figure


def test_link_kinds_follow_the_aer_sets():
    kinds = link_kinds(predicted={(0, 0), (1, 2), (2, 2)}, sure={(0, 0), (1, 1)}, possible={(1, 2)})
    assert kinds == {
        "sure": [(0, 0), (1, 1)],
        "possible": [(1, 2)],
        "hit": [(0, 0), (1, 2)],
        "wrong": [(2, 2)],
        "missed": [(1, 1)],
    }


def test_links_figure_draws_each_layer_above_the_heatmap_with_the_legend_outside():
    w = np.array([[0.7, 0.3], [0.1, 0.9], [0.5, 0.5]])
    layers = {"attention (argmax)": ("attention", [(0, 0), (1, 1)]), "eflomal": ("eflomal", [(0, 0)])}
    fig = links_figure(w, ["<b>x</b>", "y"], ["a", "b", "c"], layers, title="t <i>")
    heat, *layers = fig.data
    assert heat.type == "heatmap" and [t.name for t in layers] == ["attention (argmax)", "eflomal"]
    assert list(layers[0].x) == [0, 1] and list(layers[0].y) == [0, 1]
    assert layers[0].marker.symbol == "circle" and layers[1].marker.symbol == "square-open"
    assert fig.layout.xaxis.ticktext[0] == "&lt;b&gt;x&lt;/b&gt;" and fig.layout.title.text == "t &lt;i&gt;"
    assert fig.layout.legend.y == 1.0 and fig.layout.legend.yanchor == "bottom"  # above the plot area
    assert fig.layout.margin.t >= 46 + 24  # room for the title and a legend row
    with pytest.raises(InputError, match="outside"):
        links_figure(w, ["x", "y"], ["a", "b", "c"], {"bad": ("attention", [(2, 0)])}, "t")
    with pytest.raises(InputError, match="shape"):
        links_figure(w.T, ["x", "y"], ["a", "b", "c"], {}, "t")


def test_gold_figure_gives_each_kind_its_own_symbol_and_only_kinds_that_occur():
    w = np.eye(3)
    fig = gold_figure(w, ["a", "b", "c"], ["x", "y", "z"], predicted=[(0, 0), (2, 1)], sure=[(0, 0), (1, 1)])
    names = [t.name for t in fig.data[1:]]
    assert names == [KIND_NAMES[k] for k in ("sure", "hit", "wrong", "missed")]  # no possible-only link here
    symbols = [t.marker.symbol for t in fig.data[1:]]
    assert len(set(symbols)) == len(symbols)
    links = {"predicted": [(0, 0), (2, 1)], "sure": [(0, 0), (1, 1)], "possible": [(2, 2)]}
    narrow = gold_figure(w, ["a", "b", "c"], ["x", "y", "z"], **links, max_width=200)
    assert narrow.layout.margin.t > fig.layout.margin.t  # five entries wrap onto more legend rows


def test_a_narrow_map_fits_its_long_title_by_font_then_lines():
    w = np.eye(3)
    links = {"layer 0 head 0": ("attention", [(0, 0), (1, 1)])}
    title = "layer 0 head 0: argmax links against gold"
    fig = links_figure(w, ["a", "b", "c"], ["x", "y", "z"], links, title)
    size = fig.layout.title.font.size
    width = fig.layout.width - 30
    lines = fig.layout.title.text.split("<br>")
    assert size is not None and size < 17  # smaller than a wide map's title
    assert all(len(line) * size * 0.58 <= width for line in lines)  # every line fits the figure
    long = links_figure(w, ["a", "b", "c"], ["x", "y", "z"], links, title + " and a good deal more text" * 3)
    assert "<br>" in long.layout.title.text and long.layout.height > fig.layout.height  # lines, with room made
