"""Word links drawn on the attention heatmap: links extracted from attention and from eflomal, and
predicted links scored against gold ones (sure, possible, hit, wrong, missed).

Pure functions: a ``[tgt_words, src_words]`` weight matrix, its words and ``(source_index,
target_index)`` links in, a Plotly figure out. Words go through
:func:`attnviz.plots.heatmap.display_tokens` (HTML-escaped) like everywhere else; every marker layer is
a legend entry, and the legend sits above the plot area, never over the cells.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

import numpy as np
import plotly.graph_objects as go

from attnviz.data import Link
from attnviz.errors import InputError
from attnviz.plots.heatmap import (
    WEIGHT_SCALE,
    apply_template,
    cell_size,
    display_tokens,
    fit_title,
    label_px,
    tick_angle,
)

COLORBAR_PX = 110  # right of the plot area: the colour bar and its title
TITLE_PX, LEGEND_ROW_PX = 46, 24
# marker per kind: (symbol, colour, size as a share of the cell, line width). Filled markers have a
# white rim and open ones a thick line, so that both read on white and on dark blue cells.
STYLES = {
    "attention": ("circle", "#e6550d", 0.42, 1.5),
    "eflomal": ("square-open", "#3ad16b", 0.86, 3),
    "sure": ("square-open", "#d62728", 0.86, 2.5),
    "possible": ("diamond-open", "#ff7f0e", 0.86, 2),
    "hit": ("circle", "#2ca02c", 0.42, 1.5),
    "wrong": ("x", "#6a3d9a", 0.46, 1.5),
    "missed": ("circle-open", "#d62728", 0.42, 2.5),
}
KIND_NAMES = {
    "sure": "gold sure",
    "possible": "gold possible",
    "hit": "hit: predicted, in gold",
    "wrong": "wrong: predicted, not in gold",
    "missed": "miss: sure, not predicted",
}


def link_kinds(predicted: Iterable[Link], sure: Iterable[Link], possible: Iterable[Link] = ()) -> dict[str, list[Link]]:
    """Each cell's part in the AER (``possible`` may or may not include ``sure``, as in
    :mod:`attnviz.evaluation.metrics`): the gold ``sure`` and ``possible``-only links, and the predicted links
    that are a ``hit`` (in gold) or ``wrong`` (not in gold), and the sure links ``missed``."""
    pred, s = set(predicted), set(sure)
    p = set(possible) | s
    return {
        "sure": sorted(s),
        "possible": sorted(p - s),
        "hit": sorted(pred & p),
        "wrong": sorted(pred - p),
        "missed": sorted(s - pred),
    }


def _check(weights: np.ndarray, source_words: list[str], target_words: list[str]) -> np.ndarray:
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (len(target_words), len(source_words)):
        raise InputError(
            f"weights of shape {w.shape} do not match {len(target_words)} target and {len(source_words)} source "
            "words; pass the [tgt, src] matrix the links were read from"
        )
    return w


def legend_rows(names: list[str], width_px: int) -> int:
    """Rows a horizontal legend of ``names`` takes in ``width_px`` (a generous estimate per entry)."""
    rows, used = 1, 0
    for name in names:
        entry = 48 + 7 * len(name)
        if used and used + entry > width_px:
            rows, used = rows + 1, 0
        used += entry
    return rows


def words_heatmap(
    weights: np.ndarray,
    source_words: list[str],
    target_words: list[str],
    title: str,
    legend: list[str] = (),
    max_width: int | None = None,
) -> go.Figure:
    """The ``[tgt, src]`` weights as a heatmap over words, sized for square cells within
    ``max_width`` pixels, with room above the plot for a legend of ``legend`` entries."""
    w = _check(weights, source_words, target_words)
    n_tgt, n_src = w.shape
    src, tgt = display_tokens(source_words), display_tokens(target_words)
    text = [
        [f"source [{s}]: {src[s]}<br>target [{t}]: {tgt[t]}<br>weight: {w[t, s]:.3f}" for s in range(n_src)]
        for t in range(n_tgt)
    ]
    heat = go.Heatmap(z=w, x=list(range(n_src)), y=list(range(n_tgt)), colorscale=WEIGHT_SCALE, zmin=0.0, text=text)
    heat.update(hovertemplate="%{text}<extra></extra>", colorbar={"title": {"text": "weight"}}, name="weights")
    fig = go.Figure(heat)
    left = label_px(target_words, 0)
    cell = cell_size(max(n_src, n_tgt, 1))
    if max_width is not None:
        cell = max(14, min(cell, (max_width - left - COLORBAR_PX) // max(n_src, 1)))
    angle = tick_angle(source_words, cell)
    bottom = label_px(source_words, angle)
    width = left + n_src * cell + COLORBAR_PX
    top = TITLE_PX + (LEGEND_ROW_PX * legend_rows(list(legend), width - left) + 8 if legend else 0)
    fig.update_xaxes(
        tickmode="array",
        tickvals=list(range(n_src)),
        ticktext=src,
        tickangle=angle,
        range=[-0.5, n_src - 0.5],
        showgrid=False,
        zeroline=False,
    )
    fig.update_yaxes(
        tickmode="array",
        tickvals=list(range(n_tgt)),
        ticktext=tgt,
        range=[n_tgt - 0.5, -0.5],
        showgrid=False,
        zeroline=False,
    )
    apply_template(fig)
    fig.update_layout(
        title={
            "text": html.escape(title, quote=False),
            "y": 1,
            "yanchor": "top",
            "yref": "container",
            "x": 0.01,
            "pad": {"t": 6},
        },
        width=width,
        height=top + n_tgt * cell + bottom,
        margin={"l": left, "b": bottom, "t": top, "r": 20},
        showlegend=bool(legend),
        legend={"orientation": "h", "x": 0, "xanchor": "left", "y": 1.0, "yanchor": "bottom", "yref": "paper"},
        plot_bgcolor="white",
        hovermode="closest",
    )
    fig.layout.meta = {"cell_px": cell}
    fit_title(fig)  # a short sentence's narrow map: a smaller font, then lines
    return fig


def add_links(fig: go.Figure, links: Iterable[Link], name: str, kind: str, words: tuple[list[str], list[str]]) -> None:
    """One legend entry of markers on the cells of ``links``, drawn in the style of ``kind`` (:data:`STYLES`)."""
    links = sorted(links)
    src, tgt = (display_tokens(w) for w in words)
    bad = [(i, j) for i, j in links if not (0 <= i < len(src) and 0 <= j < len(tgt))]
    if bad:
        raise InputError(
            f"links {bad} fall outside {len(src)} source x {len(tgt)} target words; links are (source, target)"
        )
    symbol, color, share, line = STYLES[kind]
    cell = fig.layout.meta["cell_px"]
    label = html.escape(name, quote=False)
    rim = color if symbol.endswith("-open") else "white"  # open symbols are drawn by their line
    marker = {"symbol": symbol, "color": color, "size": max(6, cell * share), "line": {"width": line, "color": rim}}
    text = [f"{label}: {i}-{j}<br>{src[i]} – {tgt[j]}" for i, j in links]
    dots = go.Scatter(x=[i for i, _ in links], y=[j for _, j in links], mode="markers", name=label, marker=marker)
    fig.add_trace(dots.update(text=text, hovertemplate="%{text}<extra></extra>", showlegend=True))


def links_figure(
    weights: np.ndarray,
    source_words: list[str],
    target_words: list[str],
    layers: dict[str, tuple[str, Iterable[Link]]],
    title: str,
    max_width: int | None = None,
) -> go.Figure:
    """The word-level attention with extracted links on top: ``layers`` maps a legend name to
    ``(kind, links)``, a kind of :data:`STYLES` ("attention", "eflomal")."""
    names = list(layers)
    fig = words_heatmap(weights, source_words, target_words, title, names, max_width)
    for name, (kind, links) in layers.items():
        add_links(fig, links, name, kind, (source_words, target_words))
    return fig


def gold_figure(
    weights: np.ndarray,
    source_words: list[str],
    target_words: list[str],
    predicted: Iterable[Link],
    sure: Iterable[Link],
    possible: Iterable[Link] = (),
    title: str = "Gold and predicted links",
    max_width: int | None = None,
) -> go.Figure:
    """The word-level attention with gold links (sure, possible) and predicted ones scored against
    them (hit, wrong, miss): see :func:`link_kinds`. Kinds without a link get no legend entry."""
    kinds = {kind: links for kind, links in link_kinds(predicted, sure, possible).items() if links}
    names = [KIND_NAMES[kind] for kind in kinds]
    fig = words_heatmap(weights, source_words, target_words, title, names, max_width)
    for kind, links in kinds.items():
        add_links(fig, links, KIND_NAMES[kind], kind, (source_words, target_words))
    return fig
