"""Replay a training's alignment history: a probe's heatmap at a recorded point on a fixed 0..1
colour scale beside the loss, AER and entropy curves with a marker at that point, and the same
as a Plotly animation (frames, a slider, a play button) that plays in the browser and exports as
one self-contained HTML file.

``history`` is the plain data of :meth:`attnviz.decoding.AlignmentHistory.to_dict` (what
:func:`attnviz.store.read_history` returns): ``points`` (``step``, ``epoch``, ``epochs``, ``loss``,
``aer``, ``entropy``, ...) and ``probes`` (tokens, gold links, ``weights [points][T][S]``).
Several histories (the two decoder styles in Both) share one axis of progress: at each value
every history shows its latest point at or before it.
"""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnviz.errors import InputError
from attnviz.plots.heatmap import GOLD_COLOR, WEIGHT_SCALE, apply_template, display_tokens, label_px, tick_angle

AXES = {"step": "step", "epochs": "epoch"}  # the progress axis: optimiser steps or (fractional) epochs
CURVES = (("loss", "training loss"), ("aer", "AER (probes)"), ("entropy", "entropy (nats)"))
COLORS = ("#3182bd", "#e6550d", "#31a354", "#756bb1")
MARKER = "#d62728"
# The layout in pixels, so that nothing overlaps at any width from NARROW_PX up (a 1280 px window
# gives the page 820 px). From the top: Plotly's mode bar (25 px: it covers the top right corner on
# hover), the title's lines, the legend's row (two histories), the source tokens, the plots; below
# them the play buttons' row, then the slider (its current value, rail and ticks). The title is
# anchored by its top at TITLE_Y_PX; Plotly draws a title of several lines one line higher.
NARROW_PX = 700
TITLE_Y_PX, TITLE_LINE_PX, LEGEND_PX = 44, 20, 30
CHAR_PX, YTITLE_PX = 7, 28  # a 12 px tick label's character; a y axis title (a model's name) beside its labels
BUTTONS_TOP_PX, BUTTONS_PX = 56, 32  # the buttons' row, under the curves' axis titles
SLIDER_TOP_PX = BUTTONS_TOP_PX + BUTTONS_PX + 8
BOTTOM_PX = SLIDER_TOP_PX + 80  # the slider: its current value, rail and tick labels


def _check(history: dict, probe: int, axis: str) -> None:
    if axis not in AXES:
        raise InputError(f"axis must be one of {', '.join(AXES)}, got {axis!r}")
    if not history.get("points"):
        raise InputError("this history has no recorded points yet")
    if not 0 <= probe < len(history.get("probes", [])):
        raise InputError(f"probe must be between 0 and {len(history.get('probes', [])) - 1}, got {probe}")


def progress(history: dict, axis: str = "step") -> list[float]:
    """Each point's place on the progress axis: its step, or its fractional epoch count."""
    return [float(p["step"] if axis == "step" else p.get("epochs") or 0.0) for p in history["points"]]


def point_label(point: dict) -> str:
    """A point in words: ``step 96 · epoch 1 · loss 2.31 · AER 0.42 · entropy 1.10``."""
    parts = [
        "untrained" if point.get("kind") == "start" else f"step {point['step']:,}",
        f"epoch {point['epoch']}" + (" (end)" if point.get("kind") == "epoch" else ""),
    ]
    for key, name, fmt in (("loss", "loss", ".2f"), ("aer", "AER", ".2f"), ("entropy", "entropy", ".2f")):
        if point.get(key) is not None:
            parts.append(f"{name} {point[key]:{fmt}}")
    return " · ".join(parts)


def _heatmap(probe: dict, weights: np.ndarray, name: str) -> go.Heatmap:
    src, tgt = display_tokens(probe["source_tokens"]), display_tokens(probe["target_tokens"])
    hover = [[f"{tgt[t]} → {src[s]}" for s in range(len(src))] for t in range(len(tgt))]
    return go.Heatmap(
        z=weights,
        zmin=0.0,
        zmax=1.0,
        colorscale=WEIGHT_SCALE,
        text=hover,
        name=name,
        hovertemplate="%{text}: %{z:.3f}<extra></extra>",
        showscale=False,
    )


def _gold(probe: dict) -> go.Scatter | None:
    sure = probe.get("sure")
    if not sure:
        return None
    return go.Scatter(
        x=[i for i, _ in sure],
        y=[j for _, j in sure],
        mode="markers",
        name="gold link",
        marker={"symbol": "square-open", "size": 11, "color": GOLD_COLOR, "line": {"width": 1.5}},
        hoverinfo="skip",
        showlegend=False,
    )


def _tick_angle(probe: dict, width_px: float) -> int:
    """Source labels upright when each fits its column of a heatmap ``width_px`` wide, slanted when
    a slanted label's footprint fits, else vertical (:func:`attnviz.plots.heatmap.tick_angle`)."""
    src = probe["source_tokens"]
    return tick_angle(src, int(width_px / len(src)))


def _label_width(tokens: list[str]) -> int:
    """Pixels a column of upright tick labels takes beside its axis."""
    return max((len(t) for t in tokens), default=1) * CHAR_PX + 12


def _spread(count: int, gap: float) -> list[list[float]]:
    """``count`` equal domains across the plot width, ``gap`` (a fraction of it) between them."""
    width = (1 - gap * (count - 1)) / count
    return [[k * (width + gap), k * (width + gap) + width] for k in range(count)]


def _style_heatmap_axes(fig: go.Figure, probe: dict, row: int, col: int, width_px: float) -> None:
    src, tgt = display_tokens(probe["source_tokens"]), display_tokens(probe["target_tokens"])
    angle = _tick_angle(probe, width_px)
    fig.update_xaxes(
        tickmode="array",
        tickvals=list(range(len(src))),
        ticktext=src,
        tickangle=angle,
        side="top",
        range=[-0.5, len(src) - 0.5],
        showgrid=False,
        row=row,
        col=col,
    )
    fig.update_yaxes(
        tickmode="array",
        tickvals=list(range(len(tgt))),
        ticktext=tgt,
        autorange="reversed",
        showgrid=False,
        row=row,
        col=col,
    )


def _latest(xs: list[float], x: float) -> int:
    """The index of the last point at or before ``x`` (the first point when none is)."""
    return max(int(np.searchsorted(xs, x, side="right")) - 1, 0)


def _curve_keys(histories: list[dict]) -> list[tuple[str, str]]:
    return [(k, t) for k, t in CURVES if any(p.get(k) is not None for h in histories for p in h["points"])]


def replay_figure(
    histories: dict[str, dict], probe: int = 0, axis: str = "step", index: int | None = None, frame_ms: int = 450
) -> go.Figure:
    """The replay of one or more named histories (one: a model; two: Bahdanau and Luong).

    Each history's probe ``probe`` as a heatmap (weights 0..1 on one colour scale, gold links
    outlined), and below them the loss, AER and entropy of every history against ``axis``
    (``"step"`` or ``"epochs"``) with a marker at the current point. With several points the
    figure animates: a frame per distinct place on the axis, a slider over them and a play
    button. It opens at ``index`` (a place on the axis, by default the last).
    """
    if not histories:
        raise InputError("no history to replay")
    for history in histories.values():
        _check(history, probe, axis)
    items = list(histories.values())
    # names as Plotly shows them: escaped once (a model file's name is not markup), "%{" as an
    # entity so that a hovertemplate reads it as text, not as a variable
    names = [html.escape(name, quote=False).replace("%{", "&#37;{") for name in histories]
    places = sorted({x for h in items for x in progress(h, axis)})
    index = len(places) - 1 if index is None else index
    if not 0 <= index < len(places):
        raise InputError(f"index must be between 0 and {len(places) - 1}, got {index}")
    xs = [progress(h, axis) for h in items]
    curves = _curve_keys(items)
    n, m = len(items), max(len(curves), 1)
    shown = [h["probes"][probe] for h in items]
    fig, heat_px, margin = _grid(shown, [t for _, t in curves])
    moving = []  # indices of the traces the frames update, in the order frames give them

    def heat_at(k: int) -> dict:
        return {"row": 1, "col": 1 if n == 1 else k * m + 1}

    def curve_at(c: int) -> dict:
        return {"row": c + 1, "col": 2} if n == 1 else {"row": 2, "col": c * n + 1}

    def at(k: int, x: float) -> int:
        return _latest(xs[k], x)

    for k, p in enumerate(shown):
        weights = np.asarray(p["weights"], dtype=np.float32)  # [points, T, S]
        fig.add_trace(_heatmap(p, weights[at(k, places[index])], names[k]), **heat_at(k))
        moving.append(len(fig.data) - 1)
        gold = _gold(p)
        if gold is not None:
            fig.add_trace(gold, **heat_at(k))
        _style_heatmap_axes(fig, p, **heat_at(k), width_px=heat_px)
        if n > 1:
            fig.update_yaxes(title_text=f"<b>{names[k]}</b>", **heat_at(k))
    for c, (key, title) in enumerate(curves):
        for k, history in enumerate(items):
            rows = [(x, p[key]) for x, p in zip(xs[k], history["points"], strict=True) if p.get(key) is not None]
            fig.add_trace(
                go.Scatter(
                    x=[x for x, _ in rows],
                    y=[y for _, y in rows],
                    mode="lines+markers",
                    marker={"size": 4},
                    line={"color": COLORS[k % len(COLORS)]},
                    name=names[k],
                    legendgroup=names[k],
                    showlegend=c == 0 and n > 1,
                    hovertemplate=f"{names[k]}<br>{AXES[axis]} %{{x}}<br>{title} %{{y:.3f}}<extra></extra>",
                ),
                **curve_at(c),
            )
        for k in range(n):
            ring = {"size": 11, "color": MARKER, "symbol": "circle-open", "line": {"width": 2.5}}
            fig.add_trace(
                go.Scatter(
                    **_marker(items[k], xs[k], at(k, places[index]), key),
                    mode="markers",
                    marker=ring,
                    hoverinfo="skip",
                    showlegend=False,
                ),
                **curve_at(c),
            )
            moving.append(len(fig.data) - 1)
        pad = (places[-1] - places[0]) * 0.03 or 0.5
        fig.update_xaxes(range=[places[0] - pad, places[-1] + pad], **curve_at(c))  # one range on every curve
        if n > 1 or c == len(curves) - 1:
            fig.update_xaxes(title_text=AXES[axis], **curve_at(c))
        if key == "aer":
            fig.update_yaxes(range=[0, 1.02], **curve_at(c))
        else:
            fig.update_yaxes(rangemode="tozero", **curve_at(c))

    def title(x: float) -> str:
        parts = [(f"{names[k]}: " if n > 1 else "") + point_label(items[k]["points"][at(k, x)]) for k in range(n)]
        return "<br>".join(parts)

    def frame_data(x: float) -> list:
        data = []
        for k, history in enumerate(items):
            weights = history["probes"][probe]["weights"]
            data.append(go.Heatmap(z=weights[at(k, x)]))
        for key, _ in curves:
            data += [go.Scatter(**_marker(items[k], xs[k], at(k, x), key)) for k in range(n)]
        return data

    apply_template(fig)
    rows = max(len(p["target_tokens"]) for p in shown)
    animated = len(places) > 1
    below = BOTTOM_PX if animated else 60
    plots = max(330, 26 * rows) if n == 1 else 160 + 20 * rows  # the plots' height: rows of the map legible
    height = margin["t"] + plots + below
    line = {"yref": "container", "yanchor": "top"}
    fig.update_layout(
        title={
            "text": title(places[index]),
            "x": 0.01,
            "xanchor": "left",
            "font": {"size": 14},
            "y": 1 - TITLE_Y_PX / height,
            **line,
        },
        legend={
            "orientation": "h",
            "x": 0.01,
            "xref": "container",
            "xanchor": "left",
            "y": 1 - (TITLE_Y_PX + TITLE_LINE_PX * n) / height,
            **line,
        },
        height=height,
        margin={**margin, "b": below},
    )
    if animated:
        labels = [f"{x:,.0f}" if axis == "step" else f"{x:.2f}" for x in places]
        fig.frames = [
            go.Frame(data=frame_data(x), traces=moving, name=labels[i], layout={"title": {"text": title(x)}})
            for i, x in enumerate(places)
        ]
        fig.update_layout(**_controls(labels, index, axis, frame_ms))
    return fig


def _grid(probes: list[dict], titles: list[str]) -> tuple[go.Figure, float, dict]:
    """The subplots for ``probes`` (one heatmap each) and the curves named ``titles``, with the
    heatmaps' width (pixels, at :data:`NARROW_PX`) and the margins; one heatmap sits left of the
    curves stacked, several side by side above the curves in a row. Widths are set in pixels so the
    target tokens (each heatmap's y labels) and the model names never reach into the plot beside."""
    n, m = len(probes), max(len(titles), 1)
    ylabels = max(_label_width(p["target_tokens"]) for p in probes) + (YTITLE_PX if n > 1 else 0)
    wide = min(ylabels + 14, NARROW_PX // 3)
    paper = NARROW_PX - wide - 30
    if n == 1:  # the heatmap on the left, the curves stacked on the right
        specs = [[{"rowspan": m}, {}], *([None, {}] for _ in range(m - 1))]
        fig = make_subplots(
            rows=m,
            cols=2,
            specs=specs,
            column_widths=[0.56, 0.44],
            horizontal_spacing=0.1,
            vertical_spacing=0.16,
            subplot_titles=["", *titles],
        )
        heat_px = paper * 0.9 * 0.56
    else:  # the heatmaps side by side, the curves in a row below them
        specs = [[{"colspan": m}, *[None] * (m - 1)] * n, [{"colspan": n}, *[None] * (n - 1)] * m]
        fig = make_subplots(
            rows=2,
            cols=n * m,
            specs=specs,
            row_heights=[0.64, 0.36],
            vertical_spacing=0.12,
            horizontal_spacing=0.01,
            subplot_titles=[*[""] * n, *titles],
        )
        heat_gap = min((ylabels + 16) / paper, 0.3)
        for k, domain in enumerate(_spread(n, heat_gap)):
            fig.update_xaxes(domain=domain, row=1, col=k * m + 1)
        for c, domain in enumerate(_spread(m, min(70 / paper, 0.15))):
            fig.update_xaxes(domain=domain, row=2, col=c * n + 1)
            if c < len(titles):
                fig.layout.annotations[c].x = sum(domain) / 2  # the curve's title over its new place
        heat_px = paper * (1 - heat_gap * (n - 1)) / n
    top = TITLE_Y_PX + TITLE_LINE_PX * n + (LEGEND_PX if n > 1 else 0)
    labels = max(label_px(p["source_tokens"], _tick_angle(p, heat_px)) for p in probes)
    return fig, heat_px, {"t": top + labels, "l": wide, "r": 30}


def _controls(labels: list[str], index: int, axis: str, frame_ms: int) -> dict:
    """The play buttons on a row of their own under the plots, then the slider across the whole
    width (its current value at its top left, under the buttons, never beside them)."""
    still = {"mode": "immediate", "frame": {"duration": 0, "redraw": True}, "transition": {"duration": 0}}
    play = {
        "frame": {"duration": frame_ms, "redraw": True},
        "fromcurrent": False,
        "transition": {"duration": 0},
        "mode": "immediate",
    }
    buttons = {
        "type": "buttons",
        "direction": "left",
        "x": 0,
        "y": 0,
        "xanchor": "left",
        "yanchor": "top",
        "pad": {"t": BUTTONS_TOP_PX, "r": 10},
        "showactive": False,
        "buttons": [
            {"label": "▶ Play from the start", "method": "animate", "args": [labels, play]},
            {"label": "Pause", "method": "animate", "args": [[None], still]},
        ],
    }
    slider = {
        "active": index,
        "x": 0,
        "len": 1,
        "y": 0,
        "yanchor": "top",
        "pad": {"t": SLIDER_TOP_PX},
        "currentvalue": {"prefix": f"{AXES[axis]} "},
        "steps": [{"label": label, "method": "animate", "args": [[label], still]} for label in labels],
    }
    return {"updatemenus": [buttons], "sliders": [slider]}


def _marker(history: dict, xs: list[float], i: int, key: str) -> dict:
    """The current point on one curve: its x and y (empty where the point lacks the value)."""
    value = history["points"][i].get(key)
    return {"x": [xs[i]] if value is not None else [], "y": [value] if value is not None else []}


def replay_html(fig: go.Figure, title: str = "attnviz alignment replay") -> str:
    """The replay as one self-contained HTML page (plotly.js inlined: it plays offline)."""
    body = fig.to_html(include_plotlyjs=True, full_html=True, auto_play=False, config={"displaylogo": False})
    return body.replace("<head>", f"<head><title>{html.escape(title)}</title>", 1)
