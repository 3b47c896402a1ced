"""A layer x head grid of small cross-attention maps, to find the heads of a Transformer that align.

Pure functions: a ``[layers, heads, tgt, src]`` stack (read as words), its words and, where gold links
were scored, each head's AER in; one Plotly figure out. The grid fills the width it is given (each map's
height follows its words, cells as square as that allows); its colour scale is one of :data:`GRID_SCALES`
(each map from 0 to its own largest weight, one range for the whole grid, or a fixed 0..1). The words are
ticks on the outer maps (target words left of the first column, source words under the last row) where the
cells leave room for them; every cell's hover names both words and the weight. Each subplot's title names
its head (``L2 H5``) and its AER, every head of the lowest AER in bold; an invisible marker over each cell
carries ``(layer, head, weight)`` as ``customdata``, so a click on any cell of a map selects that head
(``st.plotly_chart(on_select="rerun")``).
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from attnviz.errors import InputError
from attnviz.plots.heatmap import (
    CHAR_EM,
    MIN_TICK_PX,
    WEIGHT_SCALE,
    apply_template,
    display_tokens,
    fit_title,
    label_px,
    tick_angle,
    tick_px,
)

GRID_SCALES = ("map", "grid", "fixed")  # each map 0..its max | 0..the grid's max | 0..1
GRID_WIDTH = 1100  # px the grid takes when no width is given
BAR_PX = 90  # the colour bar and its labels, right of the grid
GAP_PX = 10  # between two maps
MIN_MAP_PX, MAX_CELL_PX = 28, 48  # a map's smallest side; the tallest a cell gets (the width always fills)
LABEL_CELL_PX = 13  # the narrowest cell that gets word ticks (labels of MIN_TICK_PX)
TITLE_FONT_PX, MIN_TITLE_FONT_PX, TITLE_LINE_PX = 11, 8, 14
GRID_TITLE = "Every head's cross-attention (layer × head)"
# what every map's traces, title and the chosen map's outline share; heads_grid adds each one's place and data
_HEATMAP = {"type": "heatmap", "coloraxis": "coloraxis", "xgap": 0.5, "ygap": 0.5, "hoverinfo": "skip"}
_MARKERS = {"type": "scatter", "mode": "markers", "showlegend": False}
_MAP_TITLE = {"xref": "paper", "yref": "paper", "xanchor": "center", "yanchor": "bottom", "showarrow": False}
_OUTLINE = {"type": "rect", "line": {"color": "#e6550d", "width": 3}}
_TITLE = {"font": {"size": 15}, "y": 1, "yanchor": "top", "yref": "container", "pad": {"t": 12}}


@dataclass(frozen=True)
class GridLayout:
    """Where a grid's parts go, in px: each map's width and height, the word ticks (``ticks``: whether the
    cells leave room for them; their font, angle and the margins they take), the subplot titles' lines
    and font."""

    map_width: int
    map_height: int
    ticks: bool
    tick_font: int
    tick_angle: int
    left: int
    bottom: int
    title_lines: int
    title_font: int


def _title_lines(layer: int, head: int, aer: float | None, lines: int) -> list[str]:
    """A map's title on 1 line (``L2 H5 · 0.31``), 2 (``L2 H5`` over the AER) or 3 (layer, head, AER)."""
    score = [] if aer is None or not np.isfinite(aer) else [f"{aer:.2f}"]
    if lines == 1:
        return [" · ".join([f"L{layer} H{head}", *score])]
    return [f"L{layer} H{head}", *score] if lines == 2 else [f"L{layer}", f"H{head}", *score]


def grid_layout(
    layers: int,
    heads: int,
    source_words: list[str],
    target_words: list[str],
    max_width: int = GRID_WIDTH,
    scored: bool = False,
) -> GridLayout:
    """The layout of a ``layers`` x ``heads`` grid over these words that is ``max_width`` px wide
    (``scored``: the titles carry an AER)."""
    n_src, n_tgt = max(len(source_words), 1), max(len(target_words), 1)
    room = max_width - BAR_PX - 20 - (heads - 1) * GAP_PX  # px for the maps side by side, without labels
    ticks, font, angle, left, bottom = False, MIN_TICK_PX, 0, 10, 10
    if room // heads // n_src >= LABEL_CELL_PX:
        font = tick_px(room // heads // n_src)
        left = label_px(display_tokens(target_words, escape=False), 0, font)
        cell = (room - left) // heads // n_src
        ticks = cell >= LABEL_CELL_PX
        if ticks:
            angle = tick_angle(source_words, cell)
            bottom = label_px(source_words, angle, font)
        else:
            left = 10
    map_width = max(MIN_MAP_PX, (room + 20 - left) // heads)
    map_height = int(np.clip(map_width * n_tgt / n_src, MIN_MAP_PX, MAX_CELL_PX * n_tgt))
    for lines in (1, 2, 3):  # the fewest lines whose longest fits the map in a legible font
        longest = max(map(len, _title_lines(layers - 1, heads - 1, 0.0 if scored else None, lines)))
        title_font = int(min(TITLE_FONT_PX, map_width / (longest * CHAR_EM)))
        if title_font >= MIN_TITLE_FONT_PX:
            break
    return GridLayout(map_width, map_height, ticks, font, angle, left, bottom, lines, max(title_font, 6))


def _titles(layers: int, heads: int, aer: np.ndarray | None, lines: int) -> list[str]:
    """Every map's title, layer by layer (HTML lines), those of the lowest AER in bold."""
    best = set()
    if aer is not None and np.isfinite(aer).any():
        low = np.nanmin(aer)
        best = {(int(i), int(j)) for i, j in zip(*np.nonzero(np.isclose(aer, low, rtol=0, atol=1e-9)), strict=True)}
    titles = []
    for layer in range(layers):
        for head in range(heads):
            title = "<br>".join(_title_lines(layer, head, None if aer is None else aer[layer, head], lines))
            titles.append(f"<b>{title}</b>" if (layer, head) in best else title)
    return titles


def _ref(k: int) -> str:
    """The suffix of the ``k``-th subplot's axes (1-based): ``x``, ``x2``, ..."""
    return "" if k == 1 else str(k)


def _scaled(w: np.ndarray, scale: str) -> tuple[np.ndarray, float, dict]:
    """The values the maps are coloured by, the top of the colour scale, and the colour bar."""
    if scale == "map":  # each map from 0 to its own largest weight
        top = w.max(axis=(2, 3), keepdims=True)  # [layers, heads, 1, 1]
        z = np.divide(w, top, out=np.zeros_like(w), where=top > 0)
        bar = {
            "title": {"text": "share of<br>the map's<br>largest<br>weight"},
            "tickvals": [0, 0.5, 1],
            "ticktext": ["0", "half", "its max"],
            "ticklabelposition": "outside bottom",
        }
        return z, 1.0, bar
    top = 1.0 if scale == "fixed" else float(w.max()) or 1.0
    return w, top, {"title": {"text": "weight"}}


def heads_grid(
    stack: np.ndarray,
    source_words: list[str],
    target_words: list[str],
    aer: np.ndarray | None = None,
    chosen: tuple[int, int] | None = None,
    max_width: int = GRID_WIDTH,
    scale: str = "map",
) -> go.Figure:
    """Each head's ``[tgt, src]`` map in a grid of ``layers`` rows and ``heads`` columns (layer 0 on top),
    ``max_width`` px wide, coloured on the ``scale`` of :data:`GRID_SCALES`; ``aer`` (``[layers, heads]``,
    NaN where not scored) goes into the titles, every head of the lowest AER in bold; ``chosen`` is
    outlined."""
    if scale not in GRID_SCALES:
        raise InputError(f"scale must be one of {', '.join(GRID_SCALES)}, got {scale!r}")
    w = np.asarray(stack, dtype=np.float64)
    if w.ndim != 4 or w.shape[2:] != (len(target_words), len(source_words)):
        raise InputError(f"expected a [layers, heads, {len(target_words)}, {len(source_words)}] stack, got {w.shape}")
    layers, heads, n_tgt, n_src = w.shape
    shape = grid_layout(layers, heads, source_words, target_words, max_width, aer is not None)
    titles = _titles(layers, heads, aer, shape.title_lines)
    title_px = (shape.title_lines - (aer is None and shape.title_lines > 1)) * TITLE_LINE_PX + 6
    top, bottom = 44 + title_px, shape.bottom + 10
    plot_h = layers * shape.map_height + (layers - 1) * (title_px + 8)
    plot_w = heads * shape.map_width + (heads - 1) * GAP_PX
    z, cmax, bar = _scaled(w, scale)
    src, tgt = display_tokens(source_words), display_tokens(target_words)
    rows_grid, cols_grid = (a.ravel() for a in np.meshgrid(np.arange(n_tgt), np.arange(n_src), indexing="ij"))
    hover = [f"{tgt[t]} → {src[s]}" for t, s in zip(rows_grid, cols_grid, strict=True)]
    size = max(4, min(shape.map_width // n_src, shape.map_height // n_tgt))
    cells = {"x": cols_grid, "y": rows_grid, "text": hover, "marker": {"symbol": "square", "size": size, "opacity": 0}}
    axis = {"showgrid": False, "zeroline": False, "tickfont": {"size": shape.tick_font}, "showticklabels": False}
    x_range, y_range = [-0.5, n_src - 0.5], [n_tgt - 0.5, -0.5]
    ticks = {"showticklabels": True, "tickmode": "array"}
    x_ticks = {**ticks, "tickvals": list(range(n_src)), "ticktext": src, "tickangle": shape.tick_angle}
    y_ticks = {**ticks, "tickvals": list(range(n_tgt)), "ticktext": tgt}
    # the subplots laid out by hand, as one dict: make_subplots and add_trace(row=, col=) validate the
    # figure again for each of the hundreds of traces of a large model's grid
    traces, layout, notes = [], {}, []
    for layer in range(layers):
        y1 = 1 - layer * (shape.map_height + title_px + 8) / plot_h
        y0 = max(0.0, y1 - shape.map_height / plot_h)
        for head in range(heads):
            k = layer * heads + head + 1
            x0 = head * (shape.map_width + GAP_PX) / plot_w
            x1 = min(1.0, x0 + shape.map_width / plot_w)
            xa, ya = f"x{_ref(k)}", f"y{_ref(k)}"
            x_labels = x_ticks if shape.ticks and layer == layers - 1 else {}
            y_labels = y_ticks if shape.ticks and head == 0 else {}
            layout[f"xaxis{_ref(k)}"] = {**axis, "domain": [x0, x1], "anchor": ya, "range": x_range, **x_labels}
            layout[f"yaxis{_ref(k)}"] = {**axis, "domain": [y0, y1], "anchor": xa, "range": y_range, **y_labels}
            # the heatmap draws; the invisible markers on top take the hover and the click (a heatmap cell is
            # not selectable): each carries (layer, head, weight)
            traces.append({**_HEATMAP, "z": z[layer, head], "xaxis": xa, "yaxis": ya})
            weights = w[layer, head, rows_grid, cols_grid]  # [tgt * src], row by row
            # a list, not an array: a click's point carries its row, and a typed array's row reached the
            # server as {"0": .., "1": ..} instead of [layer, head, weight]
            data = np.column_stack([np.full(len(weights), layer), np.full(len(weights), head), weights]).tolist()
            hovertemplate = f"layer {layer}, head {head}<br>%{{text}}: %{{customdata[2]:.3f}}<extra></extra>"
            markers = {**_MARKERS, **cells, "customdata": data, "name": f"L{layer} H{head}"}
            traces.append({**markers, "hovertemplate": hovertemplate, "xaxis": xa, "yaxis": ya})
            font = {"size": shape.title_font}
            notes.append({**_MAP_TITLE, "text": titles[k - 1], "x": (x0 + x1) / 2, "y": y1, "font": font})
    shapes = []
    if chosen is not None and 0 <= chosen[0] < layers and 0 <= chosen[1] < heads:
        k = chosen[0] * heads + chosen[1] + 1
        box = {"x0": -0.5, "x1": n_src - 0.5, "y0": -0.5, "y1": n_tgt - 0.5}  # the whole map
        shapes.append({**_OUTLINE, **box, "xref": f"x{_ref(k)}", "yref": f"y{_ref(k)}"})
    bar.update(thickness=12, len=min(1.0, 320 / plot_h), y=1, yanchor="top")
    title = {**_TITLE, "text": html.escape(GRID_TITLE, quote=False)}
    coloraxis = {"colorscale": WEIGHT_SCALE, "cmin": 0, "cmax": cmax, "colorbar": bar}
    margin = {"l": shape.left, "r": BAR_PX - 10, "t": top, "b": bottom}
    layout.update(
        width=shape.left + plot_w + BAR_PX,
        height=top + plot_h + bottom,
        margin=margin,
        coloraxis=coloraxis,
        title=title,
        annotations=notes,
        shapes=shapes,
        clickmode="event+select",
        plot_bgcolor="white",
    )
    fig = go.Figure(data=traces, layout=layout)
    fit_title(fig)
    return apply_template(fig)
