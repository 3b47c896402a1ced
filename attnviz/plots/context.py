"""Figures of a decode's context vectors ``c_t``: a heatmap over steps and dimensions, and their
2-D projection (PCA) joined in step order. Pure functions from an :class:`Alignment`."""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from attnviz.decoding import Alignment
from attnviz.errors import InputError
from attnviz.plots.heatmap import DIVERGING_SCALE, apply_template, cell_size, display_tokens, fit_title


def _contexts(al: Alignment) -> np.ndarray:
    ctx = np.asarray(al.contexts, dtype=np.float64)  # [tgt, ctx_dim]
    if ctx.ndim != 2 or ctx.size == 0:
        raise InputError(f"this alignment has no context vectors (shape {ctx.shape})")
    return ctx


def context_range(al: Alignment) -> float:
    """The largest ``|c_t|`` entry: several context maps share the scale ``[-m, m]`` of the largest."""
    return float(np.abs(_contexts(al)).max()) or 1.0


def context_heatmap(
    al: Alignment, title: str = "Context vectors", zmax: float | None = None, max_width: int | None = None
) -> go.Figure:
    """The context vectors ``c_t`` over decoder steps: ``[tgt, ctx_dim]`` as a diverging heatmap,
    on ``[-zmax, zmax]`` (default: its own largest entry), at most ``max_width`` px wide, titled
    ``title`` (plain text, a model's name perhaps: shown as written) followed by c<sub>t</sub>."""
    ctx = _contexts(al)  # [tgt, ctx_dim]
    n_tgt, dim = ctx.shape
    m = context_range(al) if zmax is None else float(zmax)
    fig = go.Figure(go.Heatmap(z=ctx, x=list(range(dim)), y=list(range(n_tgt)), colorscale=DIVERGING_SCALE))
    fig.data[0].update(
        zmin=-m,
        zmax=m,
        hovertemplate="step %{y}, dim %{x}: %{z:.3f}<extra></extra>",
        colorbar={"title": "c<sub>t</sub>"},
    )
    cell = cell_size(n_tgt)
    fig.update_yaxes(tickmode="array", tickvals=list(range(n_tgt)), ticktext=display_tokens(al.target_tokens))
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(title_text="context dimension")
    width = max(500, 140 + dim * cell_size(dim, lo=4, hi=24))
    width = min(width, max_width) if max_width else width
    apply_template(fig)
    plot = max(n_tgt * cell, MIN_PLOT_PX)  # one step still gets a row and a readable colour bar
    shown = f"{html.escape(title, quote=False)} c<sub>t</sub>"  # the given text as written, then c_t as markup
    fig.update_layout(width=width, height=140 + plot, title={"text": shown})
    fit_title(fig)
    return fig


MIN_PLOT_PX = 80  # the least height of a context map's plot area


def pca_2d(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Project rows of ``x`` ``[n, d]`` onto their first two principal components: ``([n, 2], [2])``.

    Returns the coordinates and the explained variance ratio of each component (zeros where
    the data has fewer than two directions of variance).
    """
    xc = x - x.mean(axis=0, keepdims=True)  # [n, d]
    u, s, _ = np.linalg.svd(xc, full_matrices=False)  # u [n, k], s [k]
    coords = np.zeros((x.shape[0], 2))
    total = float((s**2).sum())
    # a direction of rounding noise only (points on a line: a one-word source mixes two vectors) stays at 0
    k = int(min(2, np.count_nonzero(s**2 > 1e-10 * total))) if total > 0 else 0
    coords[:, :k] = u[:, :k] * s[:k]
    ratio = np.zeros(2)
    if total > 0:
        ratio[:k] = s[:k] ** 2 / total
    return coords, ratio


def uncrowded(points: np.ndarray, min_gap: float = 0.08) -> list[bool]:
    """Which points of ``points`` ``[n, 2]`` get a text label: in step order, a point is labelled
    unless it lies within ``min_gap`` (a fraction of the plot's range) of one already labelled.
    The others keep their hover, so crowded labels never print over each other."""
    span = np.ptp(points, axis=0)  # [2]
    scaled = points / np.where(span > 0, span, 1.0)  # [n, 2]
    kept: list[np.ndarray] = []
    out = []
    for p in scaled:
        ok = all(np.abs(p - q).max() >= min_gap for q in kept)
        out.append(ok)
        if ok:
            kept.append(p)
    return out


def context_projection(
    al: Alignment,
    title: str = "Context vectors",
    max_width: int | None = None,
) -> go.Figure:
    """The context vectors in 2-D (PCA by SVD), labelled by target token and joined in step order,
    titled ``title`` (plain text, shown as written) followed by "· c<sub>t</sub> in 2-D (PCA)"."""
    ctx = np.asarray(al.contexts, dtype=np.float64)  # [tgt, ctx_dim]
    if ctx.ndim != 2 or ctx.size == 0:
        raise InputError(f"this alignment has no context vectors (shape {ctx.shape})")
    coords, ratio = pca_2d(ctx)  # [tgt, 2], [2]
    tokens = display_tokens(al.target_tokens)
    steps = list(range(len(tokens)))
    fig = go.Figure(go.Scatter(x=coords[:, 0], y=coords[:, 1], mode="lines+markers+text", text=tokens))
    fig.data[0].update(
        texttemplate=[tok if keep else "" for tok, keep in zip(tokens, uncrowded(coords), strict=True)],
        textposition="top center",
        customdata=steps,
        hovertemplate="step %{customdata}: %{text}<extra></extra>",
        line={"color": "#bdbdbd"},
        marker={"size": 10, "color": steps, "colorscale": "Viridis", "showscale": True, "colorbar": {"title": "step"}},
    )
    apply_template(fig)
    fig.update_layout(
        title={"text": f"{html.escape(title, quote=False)} · c<sub>t</sub> in 2-D (PCA)"},
        xaxis_title_text=f"PC1 ({ratio[0]:.0%} of variance)",
        yaxis_title_text=f"PC2 ({ratio[1]:.0%} of variance)",
        width=min(640, max_width) if max_width else 640,
        height=520,
    )
    fit_title(fig)
    return fig
