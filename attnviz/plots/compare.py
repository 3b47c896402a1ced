"""Figures that compare decodes: side-by-side heatmaps, differences, entropy and JS divergence.

Step-by-step comparisons (:func:`difference_heatmap`, :func:`js_plot`) need both alignments on
the same grid: the same source and the same number of target steps. Two models decoding freely
usually produce different targets, so decode both with forced decoding on one reference target
(or on one model's output) first; a mismatch raises :class:`attnviz.errors.InputError`.
"""

from __future__ import annotations

import html
import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnviz.decoding import Alignment
from attnviz.errors import InputError
from attnviz.evaluation import entropy, js_divergence
from attnviz.plots.heatmap import (
    DIVERGING_SCALE,
    FULL_CELL_PX,
    MIN_CELL_PX,
    WEIGHT_SCALE,
    add_alignment,
    apply_template,
    cell_size,
    display_tokens,
    label_px,
    tick_angle,
    tick_px,
)


def shared_range(alignments: list[Alignment], values: str) -> tuple[float, float]:
    """One colour range for several alignments: ``[0, max]`` for weights, ``[-m, m]`` for scores."""
    finite = [z[np.isfinite(z)] for z in (al.matrix(values) for al in alignments)]
    finite = np.concatenate([f for f in finite if f.size]) if any(f.size for f in finite) else np.zeros(1)
    if values == "weights":
        return 0.0, float(max(finite.max(), 1e-9))
    m = float(max(np.abs(finite).max(), 1e-9))
    return -m, m


def compare_heatmaps(
    alignments: dict[str, Alignment],
    values: str = "weights",
    zmin: float | None = None,
    zmax: float | None = None,
    max_width: int | None = None,
) -> go.Figure:
    """One heatmap per named alignment, side by side, on one colour scale with one colour bar;
    ``max_width`` narrows the cells (and their labels) so that the figure fits that many px, and
    puts the maps one under the other where side by side their labels could not stand upright."""
    if not alignments:
        raise InputError("compare_heatmaps needs at least one alignment; pass {name: alignment}")
    names = list(alignments)
    als = list(alignments.values())
    lo, hi = shared_range(als, values)
    zmin = lo if zmin is None else zmin
    zmax = hi if zmax is None else zmax
    widths = [np.shape(al.weights)[1] for al in als]
    rows_n = [np.shape(al.weights)[0] for al in als]
    n_max = max(max(np.shape(al.weights)) for al in als)
    left = max(label_px(al.target_tokens, 0) for al in als)
    cell = cell_size(n_max)
    stacked = False
    if max_width is not None:
        side = (max_width - len(als) * (left + 40) - 120) // sum(widths)
        stacked = len(als) > 1 and side < FULL_CELL_PX
        room = (max_width - left - 160) // max(widths) if stacked else side
        cell = max(MIN_CELL_PX, min(cell, room))
    angle = min(tick_angle(al.source_tokens, cell) for al in als)
    font = tick_px(cell)
    bottom = max(label_px(al.source_tokens, angle, font) for al in als)
    titles = [html.escape(n, quote=False) for n in names]
    if stacked:  # one column: equal cells, each map as tall as its target
        plot_h = sum(rows_n) * cell + (len(als) - 1) * (bottom + 40)
        fig = make_subplots(
            rows=len(als),
            cols=1,
            subplot_titles=titles,
            row_heights=[r / sum(rows_n) for r in rows_n],
            vertical_spacing=(bottom + 40) / plot_h,
        )
    else:
        shares = [w / sum(widths) for w in widths]
        fig = make_subplots(
            rows=1,
            cols=len(als),
            subplot_titles=titles,
            column_widths=shares,
            horizontal_spacing=min(0.12, 0.5 / len(als)),
        )
    for k, al in enumerate(als):
        row, col = (k + 1, 1) if stacked else (1, k + 1)
        add_alignment(fig, al, values, zmin, zmax, showscale=k == len(als) - 1, row=row, col=col)
        if not stacked:  # same cell height everywhere: a shorter target gets a shorter plot
            fig.update_yaxes(domain=[1 - rows_n[k] / max(rows_n), 1], row=row, col=col)
    fig.update_xaxes(tickangle=angle, tickfont_size=font)
    fig.update_yaxes(tickfont_size=font)
    apply_template(fig)
    if stacked:
        width, height = max(widths) * cell + left + 160, plot_h + bottom + 110
    else:
        width, height = sum(widths) * cell + len(als) * (left + 40) + 120, bottom + max(rows_n) * cell + 110
    fig.update_layout(
        width=width, height=height, margin={"l": left, "b": bottom, "t": 90, "r": 20}, plot_bgcolor="white"
    )
    return fig


def check_same_grid(a: Alignment, b: Alignment) -> None:
    """Raise unless ``a`` and ``b`` share the source and the number of target steps."""
    if list(a.source_tokens) != list(b.source_tokens):
        raise InputError("the two alignments have different source sentences; decode the same sentence with both")
    if np.shape(a.weights) != np.shape(b.weights):
        raise InputError(
            f"the two alignments have {np.shape(a.weights)[0]} and {np.shape(b.weights)[0]} target steps; "
            "decode both with forced decoding on the same target to compare them step by step"
        )


def row_labels(a: Alignment, b: Alignment) -> list[str]:
    """Escaped target tokens of ``a``, written ``a / b`` where the two targets differ."""
    ta, tb = display_tokens(a.target_tokens), display_tokens(b.target_tokens)
    return [x if x == y else f"{x} / {y}" for x, y in zip(ta, tb, strict=True)]


def difference_heatmap(
    a: Alignment, b: Alignment, names: tuple[str, str] = ("A", "B"), max_width: int | None = None
) -> go.Figure:
    """``a.weights - b.weights`` on a diverging scale symmetric around zero (same grid required),
    at most ``max_width`` px wide."""
    check_same_grid(a, b)
    wa = np.asarray(a.weights, dtype=np.float64)  # [tgt, src]
    wb = np.asarray(b.weights, dtype=np.float64)  # [tgt, src]
    diff = wa - wb  # [tgt, src]
    m = float(np.abs(diff).max()) or 1.0
    n_tgt, n_src = diff.shape
    src = display_tokens(a.source_tokens)
    rows = row_labels(a, b)
    na, nb = (html.escape(n, quote=False) for n in names)
    text = [
        [f"source: {src[s]}<br>target: {rows[t]}<br>{na}: {wa[t, s]:.3f}<br>{nb}: {wb[t, s]:.3f}" for s in range(n_src)]
        for t in range(n_tgt)
    ]
    heat = go.Heatmap(z=diff, x=list(range(n_src)), y=list(range(n_tgt)), colorscale=DIVERGING_SCALE)
    heat.update(zmin=-m, zmax=m, text=text, hovertemplate="%{text}<br>difference: %{z:+.3f}<extra></extra>")
    fig = go.Figure(heat.update(colorbar={"title": {"text": f"{na} − {nb}"}}))
    cell = cell_size(max(n_src, n_tgt))
    left = label_px(rows, 0)
    if max_width is not None:
        cell = max(MIN_CELL_PX, min(cell, (max_width - left - 140) // n_src))
    angle, font = tick_angle(a.source_tokens, cell), tick_px(cell)
    fig.update_xaxes(tickmode="array", tickvals=list(range(n_src)), ticktext=src, tickangle=angle, showgrid=False)
    fig.update_yaxes(tickmode="array", tickvals=list(range(n_tgt)), ticktext=rows, autorange="reversed")
    fig.update_xaxes(tickfont_size=font)
    fig.update_yaxes(tickfont_size=font)
    bottom = label_px(a.source_tokens, angle, font)
    apply_template(fig)
    fig.update_layout(
        title={"text": f"Attention difference: {na} − {nb}"},
        width=left + n_src * cell + 140,
        height=bottom + n_tgt * cell + 90,
        margin={"l": left, "b": bottom, "t": 70, "r": 20},
    )
    return fig


# each line its dash and marker as well as its colour: told apart without colour vision (WCAG 1.4.1)
LINE_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
MARKERS = ("circle", "square", "diamond", "triangle-up", "x", "star", "cross", "triangle-down")


def entropy_plot(alignments: dict[str, Alignment]) -> go.Figure:
    """Attention entropy (nats) per decoder step, one line per named alignment."""
    fig = go.Figure()
    for k, (name, al) in enumerate(alignments.items()):
        h = entropy(al.weights)  # [tgt]
        line = go.Scatter(x=list(range(len(h))), y=h, mode="lines+markers", name=html.escape(name, quote=False))
        line.update(line_dash=LINE_DASHES[k % len(LINE_DASHES)], marker_symbol=MARKERS[k % len(MARKERS)])
        fig.add_trace(line.update(text=display_tokens(al.target_tokens)))
        fig.data[-1].update(hovertemplate="step %{x}: %{text}<br>entropy %{y:.3f} nats")
    n_src = {np.shape(al.weights)[1] for al in alignments.values()}
    if len(n_src) == 1 and (n := n_src.pop()) > 1:
        fig.add_hline(y=math.log(n), line={"dash": "dash", "color": "#969696"}, annotation_text=f"uniform: ln {n}")
    apply_template(fig)
    fig.update_layout(
        title={"text": "Attention entropy per step"},
        xaxis_title_text="decoder step",
        yaxis_title_text="entropy (nats)",
        yaxis_rangemode="tozero",
        width=700,
        height=380,
    )
    return fig


JS_STEP_PX = 30  # a step's bar in the Jensen-Shannon plot


def js_plot(a: Alignment, b: Alignment, names: tuple[str, str] = ("A", "B")) -> go.Figure:
    """Jensen-Shannon divergence (nats) between two alignments at each step (same grid required)."""
    check_same_grid(a, b)
    js = js_divergence(a.weights, b.weights)  # [tgt]
    rows = row_labels(a, b)
    na, nb = (html.escape(n, quote=False) for n in names)
    bar = go.Bar(x=list(range(len(js))), y=js, text=rows, textposition="none", marker={"color": "#756bb1"})
    fig = go.Figure(bar.update(hovertemplate="step %{x}: %{text}<br>JS %{y:.3f} nats<extra></extra>"))
    fig.add_hline(y=math.log(2), line={"dash": "dash", "color": "#969696"}, annotation_text="maximum: ln 2")
    fig.update_xaxes(
        tickmode="array", tickvals=list(range(len(js))), ticktext=rows, title_text="target token (decoder step)"
    )
    plain = [html.unescape(r) for r in rows]
    angle = tick_angle(plain, JS_STEP_PX)  # a "x / y" label slanted or upright rather than over its neighbours
    fig.update_xaxes(tickangle=angle)
    apply_template(fig)
    fig.update_layout(
        title={"text": "Jensen-Shannon divergence per step", "subtitle": {"text": f"{na} vs {nb}"}},
        margin={"t": 90},
        yaxis_title_text="JS divergence (nats)",
        yaxis_range=[0, math.log(2) * 1.1],
        width=max(500, 120 + len(js) * JS_STEP_PX),
        height=300 + label_px(plain, angle),
    )
    return fig


def encoder_attention_heatmaps(al: Alignment, layer: int | None = None, head: int | None = None) -> go.Figure:
    """Encoder self-attention ``[layers, heads, src, src]``: a grid of every layer and head, or one.

    Rows of each map are query tokens, columns key tokens. ``layer`` and/or ``head`` narrow the
    grid to one layer, one head, or a single map.
    """
    if al.encoder_attention is None:
        raise InputError("this model has no Transformer encoder, so there is no encoder self-attention to show")
    ea = np.asarray(al.encoder_attention, dtype=np.float64)  # [layers, heads, src, src]
    n_layers, n_heads, n_src, _ = ea.shape
    for what, value, n in (("layer", layer, n_layers), ("head", head, n_heads)):
        if value is not None and not 0 <= value < n:
            raise InputError(f"{what} must be in 0..{n - 1}, got {value}")
    layers = range(n_layers) if layer is None else [layer]
    heads = range(n_heads) if head is None else [head]
    fig = make_subplots(
        rows=len(layers),
        cols=len(heads),
        subplot_titles=[f"layer {i}, head {j}" for i in layers for j in heads],
        horizontal_spacing=0.04,
        vertical_spacing=min(0.08, 0.3 / len(layers)),
    )
    src = display_tokens(al.source_tokens)
    text = [[f"query: {src[q]}<br>key: {src[k]}" for k in range(n_src)] for q in range(n_src)]
    single = len(layers) == len(heads) == 1
    cell = cell_size(n_src, target_px=600 if single else 260, lo=18 if single else 8)
    angle = tick_angle(al.source_tokens, cell)
    for r, i in enumerate(layers, start=1):
        for c, j in enumerate(heads, start=1):
            heat = go.Heatmap(z=ea[i, j], x=list(range(n_src)), y=list(range(n_src)), colorscale=WEIGHT_SCALE)
            heat.update(zmin=0.0, zmax=1.0, showscale=r == c == 1, text=text)
            fig.add_trace(heat.update(hovertemplate="%{text}<br>weight %{z:.3f}<extra></extra>"), row=r, col=c)
            ticks = {"tickmode": "array", "tickvals": list(range(n_src)), "ticktext": src, "showgrid": False}
            fig.update_xaxes(**ticks, tickangle=angle, showticklabels=r == len(layers), row=r, col=c)
            fig.update_yaxes(**ticks, autorange="reversed", showticklabels=c == 1, row=r, col=c)
    side = n_src * cell
    apply_template(fig)
    fig.update_layout(
        width=len(heads) * (side + 30) + label_px(al.source_tokens, 0) + 120,
        height=len(layers) * (side + 40) + label_px(al.source_tokens, angle) + 80,
    )
    return fig
