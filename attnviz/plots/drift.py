"""Drift made visible (:mod:`attnviz.links.drift`): where in the sentence predicted links agree with the
reference at each offset, for a corpus; and one sentence's links with the shifted ones pointed back to
the reference word.

Pure functions: a :class:`~attnviz.links.drift.DriftReport` (or one sentence's words, links and
:class:`~attnviz.links.drift.SentenceDrift`) in, a Plotly figure out. Positions are integers with the
words or offsets in ``ticktext``; words are HTML-escaped (:func:`attnviz.plots.heatmap.display_tokens`).
"""

from __future__ import annotations

import html
from collections.abc import Iterable

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnviz.data import Link
from attnviz.errors import InputError
from attnviz.links import DRIFT_SIDES, DriftReport, SentenceDrift, signed
from attnviz.plots.heatmap import (
    GOLD_COLOR,
    WEIGHT_SCALE,
    apply_template,
    cell_size,
    display_tokens,
    fit_title,
    label_px,
    tick_angle,
)
from attnviz.plots.links import LEGEND_ROW_PX, TITLE_PX, legend_rows

ROW_PX, PROFILE_WIDTH_PX = 34, 760
BEST_COLOR, BAR_COLOR = "#e6550d", "#9ecae1"
# predicted links by what the drift makes of them: (legend name, symbol, colour, size as a share of the cell)
KINDS = {
    "agrees": ("predicted, on the reference", "circle", "#2ca02c", 0.42),
    "shifted": ("predicted, off by the offset", "circle", BEST_COLOR, 0.42),
    "other": ("predicted, elsewhere", "x", "#6a3d9a", 0.42),
}


def _title(text: str) -> dict:
    return {
        "text": html.escape(text, quote=False),
        "y": 1,
        "yanchor": "top",
        "yref": "container",
        "x": 0.01,
        "pad": {"t": 6},
    }


def drift_profile(report: DriftReport, title: str | None = None, max_width: int | None = None) -> go.Figure:
    """The corpus's drift: left, per offset (rows) and tenth of the sentence (columns), the share of
    predicted links that agree with the reference at that offset, the best offset of each tenth marked;
    right, the sentences of each offset. A drift from mid-sentence shows as the 0 row fading and the
    offset's row lighting up from that column on."""
    offsets, bins = report.offsets, len(report.profile_links)
    z = np.array([[np.nan if v is None else v for v in row] for row in report.profile], dtype=float)  # [offsets, bins]
    spans = [f"{100 * b // bins}–{100 * (b + 1) // bins}%" for b in range(bins)]
    text = [
        [
            f"offset {signed(d)} · {spans[b]} of the sentence<br>"
            + (f"{z[r, b]:.2f} of {report.profile_links[b]} links agree" if report.profile_links[b] else "no links")
            for b in range(bins)
        ]
        for r, d in enumerate(offsets)
    ]
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, column_widths=[0.78, 0.22], horizontal_spacing=0.04)
    heat = go.Heatmap(
        z=z,
        x=list(range(bins)),
        y=offsets,
        colorscale=WEIGHT_SCALE,
        zmin=0.0,
        zmax=1.0,
        text=text,
        name="share agreeing",
        colorbar={"title": {"text": "share<br>agreeing"}, "x": 1.02},
    )
    fig.add_trace(heat.update(hovertemplate="%{text}<extra></extra>"), row=1, col=1)
    filled = [b for b in range(bins) if report.profile_links[b]]
    best = [max(offsets, key=lambda d: (z[offsets.index(d), b], -abs(d), d)) for b in filled]  # ties as in a sentence
    marks = go.Scatter(
        x=filled,
        y=best,
        mode="markers",
        name="best offset of each tenth",
        marker={"symbol": "circle", "size": 10, "color": BEST_COLOR, "line": {"width": 1.5, "color": "white"}},
        hovertemplate="best offset here: %{y:+d}<extra></extra>",
    )
    fig.add_trace(marks, row=1, col=1)
    counts = [report.histogram.get(d, 0) for d in offsets]
    colors = [BEST_COLOR if d == report.dominant else BAR_COLOR for d in offsets]
    bars = go.Bar(
        x=counts,
        y=offsets,
        orientation="h",
        name="sentences",
        marker={"color": colors},
        text=counts,
        textposition="auto",
        hovertemplate="offset %{y:+d}: %{x} sentences<extra></extra>",
        showlegend=False,
    )
    fig.add_trace(bars, row=1, col=2)
    labels = [signed(d) for d in offsets]
    fig.update_yaxes(
        tickmode="array",
        tickvals=offsets,
        ticktext=labels,
        range=[offsets[0] - 0.5, offsets[-1] + 0.5],
        showgrid=False,
        zeroline=False,
    )
    fig.update_yaxes(title_text=f"offset of the {report.side} index", row=1, col=1)
    fig.update_xaxes(
        tickmode="array",
        tickvals=list(range(bins)),
        ticktext=spans,
        tickangle=-45,
        showgrid=False,
        zeroline=False,
        title_text=f"position in the sentence ({report.positions} words)",
        row=1,
        col=1,
    )
    fig.update_xaxes(title_text="sentences", row=1, col=2)
    apply_template(fig)
    width = min(PROFILE_WIDTH_PX, max_width) if max_width else PROFILE_WIDTH_PX
    top = TITLE_PX + LEGEND_ROW_PX + 8
    fig.update_layout(
        title=_title(title or f"Drift of the {report.side} index: links that agree at each offset"),
        width=width,
        height=top + len(offsets) * ROW_PX + 110,
        margin={"l": 70, "r": 100, "t": top, "b": 110},
        legend={"orientation": "h", "x": 0, "xanchor": "left", "y": 1.0, "yanchor": "bottom", "yref": "paper"},
        plot_bgcolor="white",
        bargap=0.25,
    )
    fit_title(fig)
    return fig


def _kinds(
    predicted: list[Link], reference: set[Link], drift: SentenceDrift, side: str
) -> dict[str, list[tuple[Link, Link | None]]]:
    """Each predicted link with the reference link it is shifted onto (``None`` where it is not)."""
    kinds: dict[str, list[tuple[Link, Link | None]]] = {kind: [] for kind in KINDS}
    d, start = drift.offset or 0, drift.start
    for i, j in predicted:
        moved = (i - d, j) if side == "source" else (i, j - d)
        position = j if side == "source" else i
        if (i, j) in reference:
            kinds["agrees"].append(((i, j), None))
        elif d and start is not None and position >= start and moved in reference:
            kinds["shifted"].append(((i, j), moved))
        else:
            kinds["other"].append(((i, j), None))
    return kinds


def drift_sentence(
    source_words: list[str],
    target_words: list[str],
    predicted: Iterable[Link],
    reference: Iterable[Link],
    drift: SentenceDrift,
    side: str = "source",
    title: str = "Predicted and reference links",
    max_width: int | None = None,
) -> go.Figure:
    """One sentence's links on a word grid: reference links as open squares, predicted ones as dots (on
    the reference, off by the sentence's offset, elsewhere), an arrow from each link off by the offset to
    the reference word it belongs to, and a dashed line where the drift starts."""
    if side not in DRIFT_SIDES:
        raise InputError(f"side must be one of {', '.join(DRIFT_SIDES)}, got {side!r}")
    n_src, n_tgt = len(source_words), len(target_words)
    predicted, reference = sorted(set(predicted)), set(reference)
    bad = sorted(link for link in (*predicted, *reference) if not (0 <= link[0] < n_src and 0 <= link[1] < n_tgt))
    if bad:
        raise InputError(f"links {bad} fall outside {n_src} source x {n_tgt} target words; links are (source, target)")
    if drift.length != (n_tgt if side == "source" else n_src):
        raise InputError(
            f"the drift counts {drift.length} positions but the sentence has {n_tgt} target and {n_src} source "
            f"words; pass the drift measured on this sentence with side={side!r}"
        )
    src, tgt = display_tokens(source_words), display_tokens(target_words)
    cell = cell_size(max(n_src, n_tgt, 1))
    left = label_px(target_words, 0)
    if max_width is not None:
        cell = max(14, min(cell, (max_width - left - 30) // max(n_src, 1)))
    angle = tick_angle(source_words, cell)
    bottom = label_px(source_words, angle)
    width = left + n_src * cell + 30
    kinds = {kind: links for kind, links in _kinds(predicted, reference, drift, side).items() if links}
    names = ["reference", *(KINDS[kind][0] for kind in kinds)]
    top = TITLE_PX + LEGEND_ROW_PX * legend_rows(names, width - left) + 8
    fig = go.Figure()
    ref = sorted(reference)
    fig.add_trace(
        go.Scatter(
            x=[i for i, _ in ref],
            y=[j for _, j in ref],
            mode="markers",
            name="reference",
            marker={"symbol": "square-open", "color": GOLD_COLOR, "size": cell * 0.86, "line": {"width": 2.5}},
            text=[f"reference {i}-{j}<br>{src[i]} – {tgt[j]}" for i, j in ref],
            hovertemplate="%{text}<extra></extra>",
        )
    )
    for kind, links in kinds.items():
        name, symbol, color, share = KINDS[kind]
        fig.add_trace(
            go.Scatter(
                x=[i for (i, _), _ in links],
                y=[j for (_, j), _ in links],
                mode="markers",
                name=name,
                marker={
                    "symbol": symbol,
                    "color": color,
                    "size": max(6, cell * share),
                    "line": {"width": 1.5, "color": "white"},
                },
                text=[f"predicted {i}-{j}<br>{src[i]} – {tgt[j]}" for (i, j), _ in links],
                hovertemplate="%{text}<extra></extra>",
            )
        )
    for (i, j), (ri, rj) in kinds.get("shifted", []):
        fig.add_annotation(
            x=ri,
            y=rj,
            ax=i,
            ay=j,
            xref="x",
            yref="y",
            axref="x",
            ayref="y",
            text="",
            showarrow=True,
            arrowhead=2,
            arrowsize=1,
            arrowwidth=2,
            arrowcolor=BEST_COLOR,
            standoff=cell * 0.3,
        )
    if drift.offset and drift.start is not None:
        label = f"offset {signed(drift.offset)} from here"
        if side == "source":
            fig.add_hline(y=drift.start - 0.5, line={"dash": "dash", "color": BEST_COLOR, "width": 1.5})
            fig.add_annotation(
                x=n_src - 0.5,
                y=drift.start - 0.5,
                text=label,
                showarrow=False,
                xanchor="right",
                yanchor="bottom",
                font={"color": BEST_COLOR},
            )
        else:
            fig.add_vline(x=drift.start - 0.5, line={"dash": "dash", "color": BEST_COLOR, "width": 1.5})
            fig.add_annotation(
                x=drift.start - 0.5,
                y=-0.5,
                text=label,
                showarrow=False,
                xanchor="left",
                yanchor="top",
                font={"color": BEST_COLOR},
            )
    grid = {"showgrid": True, "gridcolor": "#eeeeee", "zeroline": False}
    fig.update_xaxes(
        tickmode="array", tickvals=list(range(n_src)), ticktext=src, tickangle=angle, range=[-0.5, n_src - 0.5], **grid
    )
    fig.update_yaxes(tickmode="array", tickvals=list(range(n_tgt)), ticktext=tgt, range=[n_tgt - 0.5, -0.5], **grid)
    apply_template(fig)
    fig.update_layout(
        title=_title(title),
        width=width,
        height=top + n_tgt * cell + bottom,
        margin={"l": left, "b": bottom, "t": top, "r": 20},
        legend={"orientation": "h", "x": 0, "xanchor": "left", "y": 1.0, "yanchor": "bottom", "yref": "paper"},
        plot_bgcolor="white",
        hovermode="closest",
    )
    fit_title(fig)
    return fig
