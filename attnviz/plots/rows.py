"""Several attention maps compared in one figure that fits a column: as many side by side as stay readable,
the rest wrapped to further rows, on one colour scale with one colour bar.

Pure function: named :class:`Alignment` traces and the column's width in px in; one Plotly figure out.
Every map keeps its own word ticks and hover (:func:`attnviz.plots.heatmap.add_alignment`); its cells are
square (a map of fewer words is smaller, not stretched), and its title wraps over the map's width.
"""

from __future__ import annotations

import html
import math
import textwrap

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnviz.decoding import Alignment
from attnviz.errors import InputError
from attnviz.plots.compare import shared_range
from attnviz.plots.heatmap import (
    CHAR_EM,
    MIN_CELL_PX,
    add_alignment,
    apply_template,
    axis_refs,
    cell_size,
    label_px,
    tick_angle,
    tick_px,
)

BAR_PX = 110  # the one colour bar and its labels
READABLE_CELL_PX = 22  # the narrowest cell of maps side by side: smaller, they wrap to another row
GAP_PX = 24  # between a map and the next one's target words
TITLE_FONT_PX, TITLE_LINE_PX = 13, 18


def per_row(alignments: list[Alignment], max_width: int) -> int:
    """How many of the maps go side by side in ``max_width`` px: the most whose cells stay at least
    :data:`READABLE_CELL_PX` wide, at least one."""
    n_src = max(np.shape(al.weights)[1] for al in alignments)
    left = max(label_px(al.target_tokens, 0) for al in alignments)
    for k in range(len(alignments), 1, -1):
        if (max_width - BAR_PX - k * (left + GAP_PX)) // (k * n_src) >= READABLE_CELL_PX:
            return k
    return 1


def _title(name: str, width_px: int) -> str:
    """``name`` escaped, wrapped at spaces to lines of ``width_px``."""
    chars = max(10, int(width_px / (TITLE_FONT_PX * CHAR_EM)))
    lines = textwrap.wrap(name, width=chars, break_long_words=True, break_on_hyphens=False) or [""]
    return "<br>".join(html.escape(line, quote=False) for line in lines)


def heatmap_rows(alignments: dict[str, Alignment], max_width: int, values: str = "weights") -> go.Figure:
    """One map per named alignment in rows of :func:`per_row` maps, at most ``max_width`` px wide, on the
    shared colour range of all of them with one colour bar (right of the first row)."""
    if not alignments:
        raise InputError("heatmap_rows needs at least one alignment; pass {name: alignment}")
    als = list(alignments.values())
    cols = per_row(als, max_width)
    rows = math.ceil(len(als) / cols)
    n_src = max(np.shape(al.weights)[1] for al in als)
    n_tgt = max(np.shape(al.weights)[0] for al in als)
    left = max(label_px(al.target_tokens, 0) for al in als)
    widest = (max_width - BAR_PX - cols * (left + GAP_PX)) // (cols * n_src)  # the cell that fills the width
    cell = max(MIN_CELL_PX, min(cell_size(max(n_src, n_tgt)), widest))
    angle = min(tick_angle(al.source_tokens, cell) for al in als)
    font = tick_px(cell)
    bottom = max(label_px(al.source_tokens, angle, font) for al in als)
    map_w, map_h = n_src * cell, n_tgt * cell
    titles = [_title(name, map_w + left - 10) for name in alignments]
    title_px = max(t.count("<br>") + 1 for t in titles) * TITLE_LINE_PX + 8
    plot_w = cols * map_w + (cols - 1) * (left + GAP_PX)
    plot_h = rows * map_h + (rows - 1) * (bottom + title_px + 10)
    across = (left + GAP_PX) / plot_w if cols > 1 else 0.0
    down = (bottom + title_px + 10) / plot_h if rows > 1 else 0.0
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=titles, horizontal_spacing=across, vertical_spacing=down)
    lo, hi = shared_range(als, values)
    for k, al in enumerate(als):
        row, col = k // cols + 1, k % cols + 1
        add_alignment(fig, al, values, lo, hi, showscale=k == 0, row=row, col=col)
        x, _ = axis_refs(fig, row, col)
        # square cells: a map of fewer words keeps the cell size and takes less room, from the top left
        fig.update_yaxes(scaleanchor=x, scaleratio=1, constrain="domain", constraintoward="top", row=row, col=col)
        fig.update_xaxes(constrain="domain", constraintoward="left", row=row, col=col)
    fig.update_xaxes(tickangle=angle, tickfont_size=font)
    fig.update_yaxes(tickfont_size=font)
    fig.update_annotations(font_size=TITLE_FONT_PX)
    heat = next(t for t in fig.data if t.type == "heatmap" and t.showscale)
    heat.colorbar.update(len=min(1.0, max(map_h, 160) / plot_h), y=1, yanchor="top", thickness=14)
    apply_template(fig)
    top = title_px + 50
    margin = {"l": left, "r": BAR_PX - 20, "t": top, "b": bottom}
    fig.update_layout(width=left + plot_w + BAR_PX, height=top + plot_h + bottom, plot_bgcolor="white", margin=margin)
    return fig
