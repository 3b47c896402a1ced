"""Carried markup drawn: each element's words coloured the same in the source and in the translation, and
a box per element on the word-level attention over its source columns and target rows.

Pure functions. The text is always escaped (``html.escape``): the user's tags are shown as text, never
rendered; the only markup in :func:`coloured_words` is this module's own ``<span>`` with a background.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

import numpy as np
import plotly.graph_objects as go

from attnviz.data import Link
from attnviz.plots.links import add_links, words_heatmap

# light backgrounds that keep black text legible, one per element in source order (then round again)
SPAN_COLOURS = ("#ffd54f", "#81d4fa", "#a5d6a7", "#f48fb1", "#ce93d8", "#ffab91", "#b0bec5", "#e6ee9c")
Range = tuple[int, int]  # [start, end) over words; start == end: between words


def span_colour(k: int) -> str:
    """The colour of the ``k``-th element (source order)."""
    return SPAN_COLOURS[k % len(SPAN_COLOURS)]


def _innermost(ranges: list[Range], j: int) -> int | None:
    """The shortest range holding word ``j`` (the latest of equals: the inner one in source order)."""
    holding = [k for k, (start, end) in enumerate(ranges) if start <= j < end]
    return min(holding, key=lambda k: (ranges[k][1] - ranges[k][0], -k), default=None)


def coloured_words(words: list[str], ranges: list[Range], labels: list[str]) -> str:
    """``words`` as HTML text, each word in the colour of the innermost element around it (``ranges``, one
    per element); an element with no words is its escaped label (``<br/>``, ``{name}``) in a coloured box
    where it sits. Every word and label is escaped."""
    out: list[str] = []

    def badge(k: int) -> None:
        out.append(
            f'<span style="border:2px solid {span_colour(k)};border-radius:3px;padding:0 2px;'
            f'font-size:0.8em">{html.escape(labels[k])}</span>'
        )

    for j, word in enumerate(words):
        for k in (k for k, (start, end) in enumerate(ranges) if start == end == j):
            badge(k)
        k = _innermost(ranges, j)
        style = f"background:{span_colour(k)};border-radius:3px;padding:0 2px" if k is not None else ""
        out.append(f'<span style="{style}">{html.escape(word)}</span>' if style else html.escape(word))
    for k in (k for k, (start, end) in enumerate(ranges) if start == end >= len(words)):
        badge(k)
    return f'<div style="line-height:2;font-size:1.05em">{" ".join(out)}</div>'


def markup_figure(
    weights: np.ndarray,
    source_words: list[str],
    target_words: list[str],
    links: Iterable[Link],
    spans: list[tuple[str, Range, Range]],
    title: str,
    max_width: int | None = None,
    link_name: str = "links",
) -> go.Figure:
    """The word-level ``[tgt, src]`` attention with the links markup was carried along and, per element
    (``(label, source range, target range)``, in source order), a box in its colour over its source columns
    and target rows; an element with no source or no target word has no box."""
    boxes = [(k, label, src, tgt) for k, (label, src, tgt) in enumerate(spans) if src[0] < src[1] and tgt[0] < tgt[1]]
    names = [link_name] + [f"{k + 1}. {label}" for k, label, _, _ in boxes]
    fig = words_heatmap(weights, source_words, target_words, title, names, max_width)
    add_links(fig, links, link_name, "attention", (source_words, target_words))
    for k, label, (s0, s1), (t0, t1) in boxes:
        colour = span_colour(k)
        fig.add_shape(
            type="rect",
            x0=s0 - 0.5,
            x1=s1 - 0.5,
            y0=t0 - 0.5,
            y1=t1 - 0.5,
            line={"color": colour, "width": 3},
            fillcolor=colour,
            opacity=0.35,
            layer="above",
            showlegend=True,
            name=html.escape(f"{k + 1}. {label}", quote=False),
        )
    return fig
