"""Figures of one decoder step: the softmax over the source with the raw scores (:func:`step_bar`)
and the context vector (:func:`context_bar`), as Explore's Per step view shows them under its step
slider; the browser-side animation of every step is :func:`attnviz.plots.explore.step_animation`.

Pure functions: an :class:`Alignment` and a step in, a Plotly figure out.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnviz.decoding import Alignment
from attnviz.errors import InputError
from attnviz.plots.explore import NEGATIVE, POSITIVE
from attnviz.plots.heatmap import (
    GOLD_COLOR,
    MIN_CELL_PX,
    UNKNOWN_COLOR,
    apply_template,
    cell_size,
    display_tokens,
    hover_text,
    label_px,
    tick_angle,
    tick_px,
    unknown_flags,
)

CONTEXT_FIXED_PX = 120  # a context figure's width outside its plot area (axis title, ticks, margins)


def _check_step(al: Alignment, t: int) -> None:
    """An :class:`InputError` naming the decode's steps where ``t`` is not one of them."""
    n_tgt = np.shape(al.weights)[0]
    if not 0 <= t < n_tgt:
        raise InputError(f"step t must be in 0..{n_tgt - 1}, got {t}")


def step_bar(al: Alignment, t: int, max_width: int | None = None) -> go.Figure:
    """The softmax over source tokens at step ``t`` (bars) and the raw scores (line, right axis).

    For local attention the window ``[p_t - D, p_t + D]`` is shaded and ``p_t`` marked.
    ``max_width`` sizes the bars (and their labels) to a column that wide: narrower to fit, or up
    to twice their natural width to use a wide screen.
    """
    _check_step(al, t)
    n_src = np.shape(al.weights)[1]
    src = display_tokens(al.source_tokens)
    unk = unknown_flags(al)
    text = hover_text(al)[t]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    colors = [UNKNOWN_COLOR if u else "#3182bd" for u in unk]
    bar = go.Bar(x=list(range(n_src)), y=al.weights[t], marker={"color": colors}, name="weight")
    fig.add_trace(bar.update(text=text, hovertemplate="%{text}<extra></extra>", textposition="none"))
    scores = np.asarray(al.scores[t], dtype=np.float64)  # [src]
    finite = np.flatnonzero(np.isfinite(scores))
    line = go.Scatter(x=finite, y=scores[finite], mode="lines+markers", name="raw score", hoverinfo="skip")
    fig.add_trace(line.update(line={"color": "#636363", "dash": "dot"}), secondary_y=True)
    if al.positions is not None and al.window is not None:
        p = float(al.positions[t])
        fig.add_vrect(x0=p - al.window, x1=p + al.window, fillcolor="#fdd0a2", opacity=0.4, line_width=0, layer="below")
        fig.add_vline(
            x=p,
            line={"color": GOLD_COLOR, "dash": "dash"},
            annotation_text=f"p<sub>t</sub> = {p:.2f}",
            annotation_position="top left",
            annotation_yshift=-18,
        )
    cell = cell_size(n_src, lo=14)
    if max_width is not None:  # the column's width, up to twice the natural bar
        cell = max(MIN_CELL_PX, min(2 * cell, (max_width - 160) // max(n_src, 1)))
    angle, font = tick_angle(al.source_tokens, cell), tick_px(min(cell, cell_size(n_src, lo=14)))
    fig.update_xaxes(tickmode="array", tickvals=list(range(n_src)), ticktext=src, tickangle=angle, tickfont_size=font)
    fig.update_xaxes(range=[-0.5, n_src - 0.5])
    fig.update_yaxes(title_text="weight", range=[0, 1.05], secondary_y=False)
    fig.update_yaxes(title_text="raw score", showgrid=False, secondary_y=True)
    target = display_tokens(al.target_tokens)[t]
    apply_template(fig)
    fig.update_layout(
        title={"text": f"Step {t}: {target}", "y": 0.98, "yanchor": "top", "yref": "container"},
        width=max(160 + n_src * cell, min(520, max_width or 520)),
        height=330 + label_px(al.source_tokens, angle, font),
        margin={"t": 95},
        legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 1, "xanchor": "right"},
        bargap=0.15,
    )
    return fig


def context_bar(al: Alignment, t: int, max_width: int | None = None) -> go.Figure:
    """The context vector ``c_t = Σ_s a_ts h_s`` of step ``t``, one bar per dimension; in a column
    of ``max_width`` px with less than a pixel per dimension, its positive and negative parts as
    two filled lines instead, as Plotly draws a bar narrower than a pixel with no width at all."""
    _check_step(al, t)
    c = np.asarray(al.contexts[t], dtype=np.float64)  # [ctx_dim]
    hover = "dim %{x}: %{customdata:.4f}<extra></extra>"
    dims = list(range(c.size))
    if max_width is not None and (max_width - CONTEXT_FIXED_PX) / max(c.size, 1) < 1:
        traces = [
            go.Scatter(x=dims, y=part, mode="lines", fill="tozeroy", line={"color": color, "width": 1})
            for part, color in ((np.maximum(c, 0), POSITIVE), (np.minimum(c, 0), NEGATIVE))
        ]
    else:
        colors = [POSITIVE if v >= 0 else NEGATIVE for v in c]
        traces = [go.Bar(x=dims, y=c, marker={"color": colors})]
    fig = go.Figure([trace.update(customdata=c, hovertemplate=hover, name="c<sub>t</sub>") for trace in traces])
    target = display_tokens(al.target_tokens)[t]
    apply_template(fig)
    fig.update_layout(
        title={"text": f"Context vector c<sub>{t}</sub> ({target}), ‖c<sub>{t}</sub>‖ = {np.linalg.norm(c):.3f}"},
        xaxis_title_text="context dimension",
        yaxis_title_text="value",
        width=max(420, CONTEXT_FIXED_PX + c.size * 6),
        height=340,
        margin={"r": 30},  # room for half the last dimension's tick label, which is not hidden past the edge
        showlegend=False,
        bargap=0.1,
    )
    return fig
