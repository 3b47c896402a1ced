"""Carried markup drawn: coloured words that are always escaped text, and a box per element on the map."""

from __future__ import annotations

import numpy as np

from attnviz.plots import SPAN_COLOURS, coloured_words, markup_figure, span_colour


def test_coloured_words_escape_every_word_and_label_and_colour_the_innermost_element():
    out = coloured_words(["<script>", "a&b", "c"], [(0, 3), (1, 2), (3, 3)], ["<b>", "<i>", "<br/>"])
    assert "<script>" not in out and "&lt;script&gt;" in out and "a&amp;b" in out
    assert f'background:{SPAN_COLOURS[1]};border-radius:3px;padding:0 2px">a&amp;b' in out  # the inner one
    assert f'background:{SPAN_COLOURS[0]};border-radius:3px;padding:0 2px">c' in out
    assert out.index("&lt;br/&gt;") > out.index(">c<")  # an element with no words, at the end
    assert "<b>" not in out and "<i>" not in out
    assert coloured_words(["x"], [], []) == '<div style="line-height:2;font-size:1.05em">x</div>'


def test_span_colours_go_round():
    assert span_colour(0) == span_colour(len(SPAN_COLOURS)) and span_colour(1) != span_colour(0)


def test_markup_figure_boxes_each_element_over_its_words_with_escaped_names():
    weights = np.eye(3)
    spans = [("<b>", (1, 3), (0, 2)), ("<br/>", (2, 2), (1, 1)), ("{x}", (0, 1), (2, 2))]
    fig = markup_figure(weights, ["a", "<c>", "d"], ["x", "y", "z"], [(0, 0), (1, 1)], spans, "t <i>", 600, "argmax")
    (box,) = fig.layout.shapes  # the elements without source or target words have no box
    assert (box.x0, box.x1, box.y0, box.y1) == (0.5, 2.5, -0.5, 1.5) and box.fillcolor == SPAN_COLOURS[0]
    assert box.name == "1. &lt;b&gt;" and box.showlegend
    assert list(fig.layout.xaxis.ticktext) == ["a", "&lt;c&gt;", "d"] and "&lt;i&gt;" in fig.layout.title.text
    assert [d.name for d in fig.data if d.type == "scatter"] == ["argmax"]
