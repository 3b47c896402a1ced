"""A layer x head grid of small cross-attention maps, to find the heads of a Transformer that align.

Pure function: a ``[layers, heads, tgt, src]`` stack (read as words), its words and, where gold links
were scored, each head's AER in; one Plotly figure out. Every map shares the 0-1 colour scale; each
subplot's title names its head (``L2 H5``) and its AER; an invisible marker over each cell carries
``(layer, head, weight)`` as ``customdata`` and the hover, so a click on any cell of a map selects that head
(``st.plotly_chart(on_select="rerun")``).
"""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnviz.errors import InputError
from attnviz.plots.heatmap import WEIGHT_SCALE, apply_template, display_tokens

MAP_PX = 120  # each small map's side, at most
MIN_MAP_PX = 56
GRID_WIDTH = 1100  # px the grid may take


def heads_grid(
    stack: np.ndarray,
    source_words: list[str],
    target_words: list[str],
    aer: np.ndarray | None = None,
    chosen: tuple[int, int] | None = None,
    max_width: int = GRID_WIDTH,
) -> go.Figure:
    """Each head's ``[tgt, src]`` map in a grid of ``layers`` rows and ``heads`` columns (layer 0 on top);
    ``aer`` (``[layers, heads]``, NaN where not scored) goes into the titles, the lowest AER in bold;
    ``chosen`` is outlined."""
    w = np.asarray(stack, dtype=np.float64)
    if w.ndim != 4 or w.shape[2:] != (len(target_words), len(source_words)):
        raise InputError(f"expected a [layers, heads, {len(target_words)}, {len(source_words)}] stack, got {w.shape}")
    layers, heads, n_tgt, n_src = w.shape
    side = max(MIN_MAP_PX, min(MAP_PX, (max_width - 80) // max(heads, 1) - 12))
    best = None
    if aer is not None and np.isfinite(aer).any():
        best = tuple(int(i) for i in np.unravel_index(np.nanargmin(aer), aer.shape))
    titles = []
    for layer in range(layers):
        for head in range(heads):
            title = f"L{layer} H{head}"
            if aer is not None and np.isfinite(aer[layer, head]):
                title += f" · {aer[layer, head]:.2f}"
            titles.append(f"<b>{title}</b>" if (layer, head) == best else title)
    fig = make_subplots(
        rows=layers,
        cols=heads,
        subplot_titles=titles,
        horizontal_spacing=0.012,
        vertical_spacing=min(0.3 / max(layers, 1), 28 / (layers * (side + 30))),
    )
    src, tgt = display_tokens(source_words), display_tokens(target_words)
    hover = [[f"{tgt[t]} → {src[s]}" for s in range(n_src)] for t in range(n_tgt)]
    cols_grid, rows_grid = np.meshgrid(np.arange(n_src), np.arange(n_tgt))
    for layer in range(layers):
        for head in range(heads):
            where = {"row": layer + 1, "col": head + 1}
            # the heatmap draws; the invisible markers on top take the hover and the click (a heatmap cell is
            # not selectable): each carries (layer, head, weight)
            fig.add_trace(
                go.Heatmap(z=w[layer, head], coloraxis="coloraxis", xgap=0.5, ygap=0.5, hoverinfo="skip"), **where
            )
            data = [
                [layer, head, float(w[layer, head, t, s])]
                for t, s in zip(rows_grid.ravel(), cols_grid.ravel(), strict=True)
            ]
            fig.add_trace(
                go.Scatter(
                    x=cols_grid.ravel(),
                    y=rows_grid.ravel(),
                    mode="markers",
                    customdata=data,
                    text=[hover[t][s] for t, s in zip(rows_grid.ravel(), cols_grid.ravel(), strict=True)],
                    hovertemplate=f"layer {layer}, head {head}<br>%{{text}}: %{{customdata[2]:.3f}}<extra></extra>",
                    marker={"symbol": "square", "size": max(4, side // max(n_src, n_tgt, 1)), "opacity": 0},
                    showlegend=False,
                    name=f"L{layer} H{head}",
                ),
                **where,
            )
    fig.update_xaxes(showticklabels=False, showgrid=False, zeroline=False, range=[-0.5, n_src - 0.5])
    fig.update_yaxes(showticklabels=False, showgrid=False, zeroline=False, range=[n_tgt - 0.5, -0.5])
    if chosen is not None and 0 <= chosen[0] < layers and 0 <= chosen[1] < heads:
        fig.add_shape(
            type="rect",
            x0=-0.5,
            x1=n_src - 0.5,
            y0=-0.5,
            y1=n_tgt - 0.5,
            row=chosen[0] + 1,
            col=chosen[1] + 1,
            line={"color": "#e6550d", "width": 3},
        )
    fig.update_annotations(font_size=11)
    height = layers * (side + 30) + 70
    fig.update_layout(
        width=min(max_width, heads * (side + 12) + 140),
        height=height,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        coloraxis={"colorscale": WEIGHT_SCALE, "cmin": 0, "cmax": 1, "colorbar": {"title": "weight", "thickness": 12}},
        title={
            "text": html.escape("Cross-attention of every head (layer × head); click a map to open it"),
            "font_size": 14,
        },
        clickmode="event+select",
    )
    return apply_template(fig)
