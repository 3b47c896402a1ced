"""Figures for the Explore page that :mod:`attnviz.plots.heatmap` lacks: maps fitted to their column,
coverage, a per-step animation that plays in the browser, attributions on the attention map's axes
(one step's figures are in :mod:`attnviz.plots.steps`, the What-if comparison in
:mod:`attnviz.plots.whatif`).

Pure functions: an :class:`Alignment` in, a Plotly figure out. Tokens go through
:func:`attnviz.plots.heatmap.display_tokens` (HTML-escaped) like everywhere else.
"""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnviz.decoding import Alignment
from attnviz.errors import InputError
from attnviz.plots.heatmap import (
    DIVERGING_SCALE,
    FULL_CELL_PX,
    GOLD_COLOR,
    MIN_CELL_PX,
    TITLE_PX,
    UNKNOWN_COLOR,
    alignment_heatmap,
    apply_template,
    cell_size,
    display_tokens,
    fit_title,
    label_px,
    tick_angle,
    tick_px,
    unknown_flags,
)

POSITIVE, NEGATIVE, WEIGHT = "#d6604d", "#4393c3", "#3182bd"
MIN_PLOT_PX = 170  # a heatmap of one or two target rows still gets a readable colour bar


def explore_heatmap(
    al: Alignment,
    values: str = "weights",
    title: str | None = None,
    zmin: float | None = None,
    zmax: float | None = None,
    max_width: int | None = None,
    fill: bool = False,
) -> go.Figure:
    """:func:`attnviz.plots.heatmap.alignment_heatmap` with a plot area tall enough for its
    colour bar; ``zmin``/``zmax`` put several maps on one scale;
    ``max_width`` shrinks the (square) cells so that the figure fits a column that wide, and with
    ``fill`` also grows them (up to :data:`FILL_CELL_PX`, the map at most :data:`FILL_HEIGHT_PX`
    tall) so that the figure fills it."""
    fig = alignment_heatmap(al, values, zmin=zmin, zmax=zmax, title=title)
    margin = fig.layout.margin
    plot_px = fig.layout.height - margin.t - margin.b
    if plot_px < MIN_PLOT_PX:
        fig.update_layout(height=fig.layout.height + MIN_PLOT_PX - plot_px)
    if max_width is not None:
        n_tgt, n_src = np.shape(al.weights)
        grow = min(FILL_CELL_PX, FILL_HEIGHT_PX // max(n_tgt, 1)) if fill else 0
        _fit_width(fig, n_tgt, n_src, max_width, grow=grow)
    fit_title(fig)
    return fig


BAR_UNDER_PX = 64  # the height a colour bar takes under a map


FILL_CELL_PX, FILL_HEIGHT_PX = 96, 720  # a filling map's largest cell, and its largest plot height


def _fit_width(
    fig: go.Figure, n_tgt: int, n_src: int, max_width: int, min_cell: int = MIN_CELL_PX, grow: int = 0
) -> None:
    """Shrink a heatmap's square cells so that the figure is at most ``max_width`` pixels wide (a
    wider one would be squeezed by the browser, labels and all), and its labels with them; or grow
    them up to ``grow`` px so that it fills that width. Where the cells get smaller than
    full-size labels, the colour bar moves under the map and gives its width to the cells."""
    margin = fig.layout.margin
    fixed_w = fig.layout.width - n_src * _cell_px(fig, n_src)
    natural = _cell_px(fig, n_src)
    cell = min(max(natural, grow), (max_width - fixed_w) // max(n_src, 1))
    under = cell < FULL_CELL_PX
    if under:  # the plot area: the width less the row labels (Plotly's automargin) and the right margin
        rows = [html.unescape(t) for t in fig.layout.yaxis.ticktext or []]
        fixed_w = max(margin.l, 10 + max(map(len, rows), default=1) * 7) + margin.r + 10
        cell = min(FULL_CELL_PX, (max_width - fixed_w) // max(n_src, 1))  # upright labels, as beside
    cell = max(min_cell, cell)
    fixed_h = fig.layout.height - n_tgt * natural
    tokens = list(fig.layout.xaxis.ticktext or [])
    angle, font = tick_angle(tokens, cell), tick_px(cell)
    bottom = label_px(tokens, angle, font)
    fixed_h += bottom - margin.b
    fig.update_xaxes(tickangle=angle, tickfont_size=font)
    fig.update_yaxes(tickfont_size=font)
    height = max(fixed_h + n_tgt * cell, margin.t + bottom + MIN_PLOT_PX)
    if under:
        plot_h = height - margin.t - bottom
        for trace in fig.data:
            if trace.type == "heatmap":
                trace.colorbar.update(
                    orientation="h",
                    x=0.45,
                    xanchor="center",
                    y=max(-2.0, -(bottom + 6) / plot_h),
                    yanchor="top",
                    thickness=12,
                    len=0.75,
                    title_side="right",
                )
        height += BAR_UNDER_PX
    bottom += BAR_UNDER_PX if under else 0
    fig.update_layout(width=fixed_w + n_src * cell, height=height, margin={"b": bottom})
    for trace in fig.data:
        if trace.type == "scatter" and trace.name == "gold":
            trace.marker.size = cell * 0.8


def align_tops(figs: list[go.Figure]) -> list[go.Figure]:
    """Maps shown side by side get the largest top margin of them all, so that their plot areas
    start at one height (a title wrapped onto more lines pushes down only its own map), and their
    titles the smallest font of them all, so that a longer name does not look like a lesser map."""
    top = max((f.layout.margin.t or 0 for f in figs), default=0)
    size = min((f.layout.title.font.size or TITLE_PX for f in figs), default=TITLE_PX)
    for fig in figs:
        if (fig.layout.title.font.size or TITLE_PX) != size:
            fig.update_layout(title_font_size=size)
        extra = top - (fig.layout.margin.t or 0)
        if extra:
            fig.update_layout(margin={"t": top}, height=fig.layout.height + extra)
    return figs


def _cell_px(fig: go.Figure, n_src: int) -> int:
    """The cell size a heatmap figure was laid out with (its width minus margins and colour bar)."""
    return round((fig.layout.width - fig.layout.margin.l - 140) / max(n_src, 1))


LOW_COVERAGE, HIGH_COVERAGE = 0.3, 1.7  # below: perhaps dropped; above: perhaps repeated
LOW_COLOR = "#fd8d3c"


def _bar_cell(n_src: int, max_width: int | None) -> tuple[int, int]:
    """A bar chart's px per source token and its tick font: narrower bars and smaller labels where
    the chart must fit ``max_width`` (its axes and margins take about 160 px)."""
    cell = cell_size(n_src, lo=14)
    if max_width is not None:
        cell = max(MIN_CELL_PX, min(cell, (max_width - 160) // max(n_src, 1)))
    return cell, tick_px(cell)


def coverage_bar(al: Alignment, max_width: int | None = None, title: str | None = None) -> go.Figure:
    """Total attention per source token (:meth:`Alignment.coverage`), with the line at 1 (``title``:
    the figure's, e.g. naming the model in Both).

    Bars under ``LOW_COVERAGE`` (orange, and an orange mark on the axis, since such a bar is a pixel
    high) mark words the decoder hardly read, perhaps left untranslated; bars over ``HIGH_COVERAGE``
    (red) words it read again and again.
    """
    cov = al.coverage()  # [src]
    n_src = cov.size
    src = display_tokens(al.source_tokens)
    colors = [LOW_COLOR if c < LOW_COVERAGE else POSITIVE if c > HIGH_COVERAGE else WEIGHT for c in cov]
    steps = np.shape(al.weights)[0]
    text = [f"{tok}: {c:.3f} in total over {steps} steps" for tok, c in zip(src, cov, strict=True)]
    bar = go.Bar(x=list(range(n_src)), y=cov.tolist(), marker={"color": colors}, text=text, textposition="none")
    fig = go.Figure(bar.update(hovertemplate="%{text}<extra></extra>", name="coverage"))
    fig.add_hline(y=1.0, line={"color": "#636363", "dash": "dot"})
    low = [s for s, c in enumerate(cov) if c < LOW_COVERAGE]
    marks = go.Scatter(
        x=low,
        y=[0.0] * len(low),
        mode="markers",
        marker={"symbol": "triangle-up", "size": 10, "color": LOW_COLOR},
        text=[text[s] for s in low],
        cliponaxis=False,
        showlegend=False,
    )
    fig.add_trace(marks.update(hovertemplate="%{text} (hardly read)<extra></extra>", name="hardly read"))
    cell, font = _bar_cell(n_src, max_width)
    angle = tick_angle(al.source_tokens, cell)
    fig.update_xaxes(tickmode="array", tickvals=list(range(n_src)), ticktext=src, tickangle=angle, tickfont_size=font)
    fig.update_xaxes(range=[-0.5, n_src - 0.5])
    fig.update_yaxes(title_text="Σ<sub>t</sub> a<sub>t,s</sub>", rangemode="tozero")
    apply_template(fig)
    fig.update_layout(
        title={"text": html.escape(title, quote=False) if title else "Coverage: total attention per source token"},
        width=max(min(520, max_width or 520), 160 + n_src * cell),
        height=280 + label_px(al.source_tokens, angle, font),
        bargap=0.15,
        showlegend=False,  # the colours are the caption's; the marks say "hardly read" on hover
    )
    return fig


def _window_shapes(al: Alignment, t: int) -> list[dict]:
    """The local window ``[p_t - D, p_t + D]`` (shaded) and ``p_t`` (a dashed line) on the top plot."""
    if al.positions is None or al.window is None:
        return []
    p = float(al.positions[t])
    return [
        {
            "type": "rect",
            "xref": "x",
            "yref": "y domain",
            "x0": p - al.window,
            "x1": p + al.window,
            "y0": 0,
            "y1": 1,
            "fillcolor": "#fdd0a2",
            "opacity": 0.4,
            "line": {"width": 0},
            "layer": "below",
        },
        {
            "type": "line",
            "xref": "x",
            "yref": "y domain",
            "x0": p,
            "x1": p,
            "y0": 0,
            "y1": 1,
            "line": {"color": GOLD_COLOR, "dash": "dash"},
        },
    ]


def _frame_title(al: Alignment, t: int) -> str:
    target = display_tokens(al.target_tokens)[t]
    where = f", p<sub>t</sub> = {float(al.positions[t]):.2f}" if al.positions is not None else ""
    return f"Step {t}: {target}{where}"


def step_animation(al: Alignment, frame_ms: int = 700, max_width: int | None = None) -> go.Figure:
    """Every decoder step as an animation frame, played in the browser (no server round trip).

    Top: the softmax weights ``a_t`` over the source tokens (and, for local attention, the
    window around ``p_t``); bottom: the context vector ``c_t``. A play button and a slider.
    """
    w = np.asarray(al.weights, dtype=np.float64)  # [tgt, src]
    ctx = np.asarray(al.contexts, dtype=np.float64)  # [tgt, ctx_dim]
    n_tgt, n_src = w.shape
    if n_tgt == 0:
        raise InputError("this alignment has no decoder steps to animate")
    src = display_tokens(al.source_tokens)
    colors = [UNKNOWN_COLOR if u else WEIGHT for u in unknown_flags(al)]
    lim = float(np.abs(ctx).max()) if ctx.size else 1.0

    def traces(t: int) -> list[go.Bar]:
        c = ctx[t]  # [ctx_dim]
        weights = go.Bar(x=list(range(n_src)), y=w[t], marker={"color": colors}, text=src, textposition="none")
        weights.update(hovertemplate="%{text}: %{y:.3f}<extra></extra>", name="a_t")
        context = go.Bar(x=list(range(c.size)), y=c, marker={"color": [POSITIVE if v >= 0 else NEGATIVE for v in c]})
        context.update(hovertemplate="dim %{x}: %{y:.4f}<extra></extra>", name="c<sub>t</sub>", xaxis="x2", yaxis="y2")
        return [weights, context]

    fig = make_subplots(rows=2, cols=1, row_heights=[0.6, 0.4], vertical_spacing=0.28)
    for k, trace in enumerate(traces(0)):
        fig.add_trace(trace, row=k + 1, col=1)
    fig.frames = [
        go.Frame(
            data=traces(t),
            traces=[0, 1],
            name=str(t),
            layout={"shapes": _window_shapes(al, t), "title": {"text": _frame_title(al, t)}},
        )
        for t in range(n_tgt)
    ]
    still = {"mode": "immediate", "frame": {"duration": 0, "redraw": True}, "transition": {"duration": 0}}
    play = {"frame": {"duration": frame_ms, "redraw": True}, "fromcurrent": True, "transition": {"duration": 0}}
    cell, font = _bar_cell(n_src, max_width)
    angle = tick_angle(al.source_tokens, cell)
    fig.update_xaxes(
        tickmode="array", tickvals=list(range(n_src)), ticktext=src, tickangle=angle, tickfont_size=font, row=1, col=1
    )
    fig.update_xaxes(range=[-0.5, n_src - 0.5], row=1, col=1)
    fig.update_yaxes(title_text="weight a<sub>t,s</sub>", range=[0, 1.05], row=1, col=1)
    fig.update_xaxes(title_text="context dimension", row=2, col=1)
    fig.update_yaxes(title_text="c<sub>t</sub>", range=[-lim * 1.05, lim * 1.05], row=2, col=1)
    apply_template(fig)
    fig.update_layout(
        title={"text": _frame_title(al, 0), "x": 0.02, "xanchor": "left", "y": 0.98, "yref": "container"},
        shapes=_window_shapes(al, 0),
        showlegend=False,
        width=max(min(560, max_width or 560), 160 + n_src * cell),
        height=560 + label_px(al.source_tokens, angle, font),
        margin={"t": 120, "b": 170, "r": 70},
        updatemenus=[
            {
                "type": "buttons",
                "direction": "left",
                "x": 1,
                "y": 1.04,
                "xanchor": "right",
                "yanchor": "bottom",
                "pad": {"r": 4, "t": 4},
                "buttons": [
                    {"label": "▶ Play", "method": "animate", "args": [None, play]},
                    {"label": "Pause", "method": "animate", "args": [[None], still]},
                ],
            }
        ],
        sliders=[
            {
                "active": 0,
                "x": 0.02,
                "y": -0.12,
                "len": 0.9,
                "yanchor": "top",
                "pad": {"r": 30, "t": 10},
                "currentvalue": {"prefix": "step "},
                "steps": [{"label": str(t), "method": "animate", "args": [[str(t)], still]} for t in range(n_tgt)],
            }
        ],
    )
    return fig


def attribution_matrix(values: np.ndarray, al: Alignment, name: str = "") -> np.ndarray:
    """Attributions ``[tgt, src]`` as floats, checked against ``al``'s weights (``name``: whose, for the error)."""
    z = np.asarray(values, dtype=np.float64)  # [tgt, src]
    if z.shape != np.shape(al.weights):
        whose = f"{name}: " if name else ""
        raise InputError(f"{whose}attributions of shape {z.shape} do not match the alignment's {np.shape(al.weights)}")
    return z


def attribution_heatmap(
    values: np.ndarray,
    al: Alignment,
    title: str,
    max_width: int | None = None,
    zmax: float | None = None,
    fill: bool = False,
) -> go.Figure:
    """Attributions ``[tgt, src]`` on the axes of ``al``'s weights heatmap (same rows, columns
    and cell size), on a diverging scale ``[-zmax, zmax]`` (default: its own largest magnitude;
    several maps pass one) symmetric around 0 (red: raises the chosen token's log-probability,
    blue: lowers it)."""
    z = attribution_matrix(values, al)  # [tgt, src]
    fig = explore_heatmap(al, "weights", title, max_width=max_width, fill=fill)
    m = float(zmax) if zmax is not None else float(np.abs(z).max()) or 1.0
    heat = next(t for t in fig.data if t.type == "heatmap")
    heat.update(
        z=z, zmin=-m, zmax=m, zmid=None, colorscale=DIVERGING_SCALE, colorbar={"title": {"text": "attribution"}}
    )
    src, tgt = display_tokens(al.source_tokens), display_tokens(al.target_tokens)
    n_tgt, n_src = z.shape
    cell = "{}<br>attribution {:+.3g}<br>attention {:.3f}"  # 3 significant digits: a confident model's are tiny
    text = [
        [cell.format(f"{tgt[t]} ← {src[s]}", z[t, s], al.weights[t, s]) for s in range(n_src)] for t in range(n_tgt)
    ]
    heat.update(text=text, customdata=None, hovertemplate="%{text}<extra></extra>")
    return fig
