"""One figure for a paper: several attention maps of one sentence (Explore's Both view, Compare's
grid) as a single Plotly figure on one colour scale, titled with the sentence, each map with its
model's name and decoder style (attnviz.plots.images writes it as HTML, PNG, SVG or PDF)."""

from __future__ import annotations

import html
import math
import textwrap
from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnviz.decoding import Alignment
from attnviz.errors import InputError
from attnviz.plots.compare import shared_range
from attnviz.plots.explore import attribution_matrix
from attnviz.plots.heatmap import (
    CHAR_EM,
    DIVERGING_SCALE,
    WEIGHT_SCALE,
    add_alignment,
    apply_template,
    display_tokens,
    label_px,
    tick_angle,
)

PAPER_CELL_PX = (14, 32)  # the smallest and largest cell of a paper figure
PAPER_FONT = "Arial, Helvetica, sans-serif"  # a font every PDF viewer and journal template has
TITLE_CHARS = 110  # the sentence's title wraps at this many characters a line
SUBTITLE_PX = 13  # a map's title font


def _check(panels: Mapping[str, Alignment], models: Mapping[str, str], values: str) -> None:
    if not isinstance(panels, Mapping) or not panels:
        raise InputError("a paper figure needs its maps as {panel name: alignment}, at least one")
    missing = [name for name in panels if name not in models]
    if missing:
        raise InputError(f"no model name for panel(s) {missing}: pass one model line per panel")
    if values not in ("weights", "scores"):
        raise InputError(f"values must be 'weights' or 'scores', got {values!r}")


def paper_figure(
    panels: Mapping[str, Alignment],
    models: Mapping[str, str],
    sentence: str,
    values: str = "weights",
    columns: int | None = None,
    note: str = "",
    attributions: Mapping[str, np.ndarray] | None = None,
    method: str = "attribution",
) -> go.Figure:
    """The maps of ``panels`` (panel name -> alignment, in display order) in one figure.

    Each map is titled ``panel name`` over its line of ``models`` (the model's name, score and
    style); one colour bar serves every map (:func:`attnviz.plots.compare.shared_range`); the
    figure's title is ``sentence``; ``note`` (how the maps were changed for reading, say) goes
    under the maps. ``columns`` maps a row (default: all in one row up to 3, then rows of 2).
    Cells are square and equal in every map, so longer translations get taller maps.

    With ``attributions`` (panel name -> ``[tgt, src]`` attributions of the same decode, e.g.
    :class:`attnviz.explain.Attribution` ``.values``), each panel is a row of two maps: its
    attention weights, then its attributions (titled ``method``) on a second, diverging colour
    bar symmetric around 0 and shared by every attribution map.
    """
    _check(panels, models, values)
    maps = _maps(panels, models, values, attributions, method)  # (title lines, alignment, attributions or None)
    als = [al for _, al, _ in maps]
    cols = columns or (2 if attributions is not None else len(als) if len(als) <= 3 else 2)
    rows = math.ceil(len(als) / cols)
    zmin, zmax = shared_range(list(panels.values()), values)
    signed = [np.abs(z).max() for _, _, z in maps if z is not None]
    reach = float(max(signed)) if signed and max(signed) > 0 else 1.0  # the attribution bar's half-range
    n_src = max(np.shape(al.weights)[1] for al in als)
    n_tgt = max(np.shape(al.weights)[0] for al in als)
    lo, hi = PAPER_CELL_PX
    lines = {k: parts for k, (parts, _, _) in enumerate(maps)}  # a map's title: its panel, then its model's parts
    title_px = max(len(line) for parts in lines.values() for line in parts) * SUBTITLE_PX * CHAR_EM
    cell = max(int(np.clip(900 / (cols * max(n_src, 1)), lo, hi)), math.ceil(title_px / max(n_src, 1)))
    angle = min(tick_angle(al.source_tokens, cell) for al in als)
    left = max(label_px(al.target_tokens, 0) for al in als)
    bottom = max(label_px(al.source_tokens, angle) for al in als)
    map_w, map_h = n_src * cell, n_tgt * cell
    extra = (max(len(parts) for parts in lines.values()) - 2) * 16  # title lines beyond two
    gap_w, gap_h, top = left + 30, bottom + 70 + extra, 110 + extra  # room for a map's row labels, ticks and title
    width = cols * map_w + (cols - 1) * gap_w + left + 130
    height = rows * map_h + (rows - 1) * gap_h + top + bottom + (40 if note else 10)
    escaped = {n: [html.escape(x, quote=False) for x in parts] for n, parts in lines.items()}
    titles = ["<br>".join([f"<b>{parts[0]}</b>", *parts[1:]]) for parts in escaped.values()]
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=titles + [""] * (rows * cols - len(titles)),
        horizontal_spacing=gap_w / (width - left - 130),
        vertical_spacing=gap_h / (height - top - bottom - (40 if note else 10)) if rows > 1 else 0.1,
    )
    for annotation in fig.layout.annotations:  # the subplot titles (the ⚠ marks come later)
        annotation.update(font={"size": SUBTITLE_PX}, yshift=8)
    for k, (_, al, z) in enumerate(maps):
        row, col = k // cols + 1, k % cols + 1
        add_alignment(fig, al, values, zmin, zmax, hover=True, showscale=False, row=row, col=col)
        heat = next(t for t in reversed(fig.data) if t.type == "heatmap")
        heat.update(coloraxis="coloraxis")
        if z is not None:  # the same axes and hover, the attributions on the second colour bar
            src, tgt = display_tokens(al.source_tokens), display_tokens(al.target_tokens)
            text = [
                [f"{tgt[t]} ← {src[s]}<br>{html.escape(method, quote=False)} {z[t, s]:+.4f}" for s in range(z.shape[1])]
                for t in range(z.shape[0])
            ]
            heat.update(z=z, coloraxis="coloraxis2", text=text, customdata=None, hovertemplate="%{text}<extra></extra>")
        # square cells: every map's axes span the same pixels per token; a shorter one ends early
        fig.update_xaxes(range=[-0.5, n_src - 0.5], tickangle=angle, row=row, col=col)
        fig.update_yaxes(range=[n_tgt - 0.5, -0.5], row=row, col=col)
    scale = WEIGHT_SCALE if values == "weights" else DIVERGING_SCALE
    bar_title = "attention weight" if values == "weights" else "raw score"
    lines = textwrap.wrap(f"“{sentence.strip()}”", TITLE_CHARS) if sentence.strip() else ["(empty sentence)"]
    wrapped = "<br>".join(html.escape(line, quote=False) for line in lines)
    apply_template(fig)
    if attributions is not None:  # two bars, one above the other: attention, then attribution
        fig.update_layout(
            coloraxis2={
                "colorscale": DIVERGING_SCALE,
                "cmin": -reach,
                "cmax": reach,
                "colorbar": {
                    "title": {"text": html.escape(method, quote=False)},
                    "len": 0.45,
                    "y": 0.0,
                    "yanchor": "bottom",
                },
            }
        )
    fig.update_layout(
        coloraxis={"colorscale": scale, "cmin": zmin, "cmax": zmax, "colorbar": {"title": {"text": bar_title}}},
        title={
            "text": wrapped,
            "x": 0.5,
            "xanchor": "center",
            "y": 0.99,
            "yanchor": "top",
            "yref": "container",
            "font": {"size": 15},
        },
        width=width,
        height=height,
        margin={"l": left, "r": 130, "t": top, "b": bottom + (40 if note else 10)},
        font={"family": PAPER_FONT},
        plot_bgcolor="white",
        showlegend=False,
    )
    if attributions is not None:  # the attention bar takes the upper half
        fig.update_layout(coloraxis_colorbar={"len": 0.45, "y": 1.0, "yanchor": "top"})
    if note:
        fig.add_annotation(
            text=html.escape(note, quote=False),
            x=0,
            xref="paper",
            xanchor="left",
            y=0,
            yref="paper",
            yanchor="top",
            yshift=-(bottom + 8),
            showarrow=False,
            font={"size": 11, "color": "#555"},
        )
    return fig


def _maps(
    panels: Mapping[str, Alignment],
    models: Mapping[str, str],
    values: str,
    attributions: Mapping[str, np.ndarray] | None,
    method: str,
) -> list[tuple[list[str], Alignment, np.ndarray | None]]:
    """Every map of the figure in order: its title lines, its alignment and, for an attribution map,
    its ``[tgt, src]`` attributions."""
    if attributions is None:
        return [([n, *models[n].split(" · ")], al, None) for n, al in panels.items()]
    if values != "weights":
        raise InputError("attributions go beside attention weights: pass values='weights'")
    maps = []
    for n, al in panels.items():
        if n not in attributions:
            raise InputError(f"no attributions for panel {n!r}: pass one [target, source] array per panel")
        z = attribution_matrix(attributions[n], al, n)
        parts = models[n].split(" · ")
        maps += [([f"{n} · attention", *parts], al, None), ([f"{n} · {method}", *parts], al, z)]
    return maps
