"""Figures about data and training rather than one decode: curves, histograms, gold alignments."""

from __future__ import annotations

import html
from collections.abc import Iterable

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from attnviz.data import Link
from attnviz.errors import InputError
from attnviz.plots.heatmap import apply_template, cell_size, display_tokens, label_px, tick_angle


def training_curves(history: list[dict]) -> go.Figure:
    """Loss and accuracy against the training step; validation lines where entries carry them;
    a third panel with the learning rate where entries carry ``lr``.

    Each entry has ``step``, ``epoch``, ``loss`` and ``accuracy``, and optionally
    ``valid_loss``, ``valid_accuracy`` and ``lr`` (missing or None where not measured).
    """
    rates = [h for h in history if h.get("lr") is not None]
    titles = ("loss", "accuracy", "learning rate")[: 3 if rates else 2]
    fig = make_subplots(rows=1, cols=len(titles), subplot_titles=titles)
    for col, key in ((1, "loss"), (2, "accuracy")):
        for prefix, dash in (("", "solid"), ("valid_", "dash")):
            rows = [h for h in history if h.get(prefix + key) is not None]
            if not rows:
                continue
            line = go.Scatter(
                x=[h["step"] for h in rows],
                y=[h[prefix + key] for h in rows],
                customdata=[h.get("epoch") for h in rows],
                mode="lines+markers" if prefix else "lines",
                name=f"{'valid' if prefix else 'train'} {key}",
                line={"dash": dash, "color": "#3182bd" if col == 1 else "#31a354"},
                hovertemplate="step %{x} (epoch %{customdata})<br>%{y:.4f}",
            )
            fig.add_trace(line, row=1, col=col)
    if rates:  # a schedule that decays too fast or too slowly shows here
        fig.add_trace(
            go.Scatter(
                x=[h["step"] for h in rates],
                y=[h["lr"] for h in rates],
                mode="lines",
                name="learning rate",
                line={"color": "#756bb1"},
                hovertemplate="step %{x}<br>%{y:.3g}",
            ),
            row=1,
            col=3,
        )
        fig.update_yaxes(rangemode="tozero", exponentformat="e", row=1, col=3)
    fig.update_xaxes(title_text="step")
    fig.update_yaxes(rangemode="tozero", row=1, col=1)
    fig.update_yaxes(range=[0, 1.02], row=1, col=2)
    if not history:
        fig.add_annotation(text="No training steps yet", x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False)
    apply_template(fig)
    # the legend on a row of its own at the bottom edge, under the axis titles
    legend = {"orientation": "h", "x": 0, "y": 0, "yref": "container", "yanchor": "bottom"}
    fig.update_layout(width=820 if not rates else 1080, height=360, legend=legend, margin={"b": 100})
    return fig


def length_histogram(df: pd.DataFrame, column: str, title: str | None = None) -> go.Figure:
    """Histogram of ``df[column]`` with one bar per whole length (numbers as they are, text as
    its whitespace token count), so bins never fall between two integers."""
    if column not in df.columns:
        raise InputError(f"no column {column!r}; the table has {', '.join(map(str, df.columns))}")
    values = df[column]
    if not pd.api.types.is_numeric_dtype(values):
        values = values.astype(str).str.split().str.len()
    values = values.dropna().astype(int)
    lo, hi = (int(values.min()), int(values.max())) if len(values) else (0, 1)
    step = max(1, -(-(hi - lo + 1) // 60))  # at most about 60 bars, each a whole number of tokens wide
    hist = go.Histogram(x=values, xbins={"start": lo - 0.5, "end": hi + 0.5, "size": step}, marker={"color": "#3182bd"})
    fig = go.Figure(hist.update(hovertemplate="%{x} tokens: %{y} rows<extra></extra>"))
    fig.update_xaxes(dtick=max(step, 1 if hi - lo <= 20 else 5), tick0=0)
    apply_template(fig)
    fig.update_layout(
        title={"text": title or f"{column} (tokens)"},
        xaxis_title_text="tokens per sentence",
        yaxis_title_text="sentence pairs",
        bargap=0.05,
        width=520,
        height=340,
    )
    return fig


def gold_heatmap(
    source_tokens: list[str],
    target_tokens: list[str],
    sure: Iterable[Link],
    possible: Iterable[Link] | None = None,
) -> go.Figure:
    """The gold alignment of one pair (tokens without ``<eos>``): sure links dark, possible light."""
    n_src, n_tgt = len(source_tokens), len(target_tokens)
    sure, possible = set(sure), set(possible or ())
    bad = sorted(link for link in sure | possible if not (0 <= link[0] < n_src and 0 <= link[1] < n_tgt))
    if bad:
        raise InputError(
            f"gold links {bad} fall outside {n_src} source x {n_tgt} target tokens; links are (source, target)"
        )
    z = np.zeros((n_tgt, n_src))  # [tgt, src]
    for i, j in possible:
        z[j, i] = 0.5
    for i, j in sure:
        z[j, i] = 1.0
    src, tgt = display_tokens(source_tokens), display_tokens(target_tokens)
    kind = {0.0: "no link", 0.5: "possible", 1.0: "sure"}
    text = [[f"source: {src[s]}<br>target: {tgt[t]}<br>{kind[z[t, s]]}" for s in range(n_src)] for t in range(n_tgt)]
    heat = go.Heatmap(z=z, x=list(range(n_src)), y=list(range(n_tgt)), zmin=0, zmax=1, showscale=False, text=text)
    heat.update(colorscale=[[0, "white"], [0.5, "#9ecae1"], [1, "#08519c"]], xgap=1, ygap=1)
    fig = go.Figure(heat.update(hovertemplate="%{text}<extra></extra>"))
    cell = cell_size(max(n_src, n_tgt, 1))
    angle = tick_angle(source_tokens, cell)
    fig.update_xaxes(tickmode="array", tickvals=list(range(n_src)), ticktext=src, tickangle=angle, showgrid=False)
    fig.update_yaxes(tickmode="array", tickvals=list(range(n_tgt)), ticktext=tgt, autorange="reversed", showgrid=False)
    left, bottom = label_px(target_tokens, 0), label_px(source_tokens, angle)
    apply_template(fig)
    fig.update_layout(
        title={"text": "Gold alignment (dark: sure, light: possible)"},
        width=left + n_src * cell + 60,
        height=bottom + n_tgt * cell + 90,
        margin={"l": left, "b": bottom, "t": 70, "r": 20},
        plot_bgcolor="#f0f0f0",
    )
    return fig


METRIC_TITLES = {
    "bleu": "BLEU (0-100)",
    "aer": "AER (lower is better)",
    "entropy": "attention entropy (nats)",
    "exact_match": "exact match",
}

# The values a metric can take: an axis never runs past them, however close together the models are.
METRIC_BOUNDS = {"bleu": (0.0, 100.0), "aer": (0.0, 1.0), "exact_match": (0.0, 1.0)}


def metric_scatter(rows: list[dict], x: str, y: str = "bleu") -> go.Figure:
    """One point per model (``rows``: dicts with "model", "score", "style" and the metrics):
    ``y`` against ``x``, colour by score function, marker by decoder style. Rows without
    either value are left out (the title says how many)."""
    missing = [[m for m in (x, y) if r.get(m) is None] for r in rows]  # per row: the values it lacks
    kept = [r for r, gone in zip(rows, missing, strict=True) if not gone]
    fig = go.Figure()
    symbols = {"bahdanau": "circle", "luong": "diamond"}
    for score in dict.fromkeys(r.get("score") for r in kept):
        mine = [r for r in kept if r.get("score") == score]
        names = [html.escape(str(r["model"]), quote=False) for r in mine]
        dots = go.Scatter(
            x=[r[x] for r in mine],
            y=[r[y] for r in mine],
            mode="markers",
            text=names,
            name=html.escape(str(score), quote=False),
            cliponaxis=False,  # a model at a bound (BLEU 100, AER 0) is drawn whole on the axis's edge
        )
        dots.update(marker={"size": 11, "symbol": [symbols.get(r.get("style"), "square") for r in mine]})
        fig.add_trace(dots.update(hovertemplate=f"%{{text}}<br>{x}: %{{x:.3f}}<br>{y}: %{{y:.2f}}<extra></extra>"))
    names = {m: m.upper() if m in ("bleu", "aer") else m.replace("_", " ") for m in (x, y)}
    lacking = [" and ".join(names[m] for m in gone) for gone in missing if gone]
    counts = {what: lacking.count(what) for what in dict.fromkeys(lacking)}
    note = "; ".join(f"{n} model{'s' if n != 1 else ''} without {what} not drawn" for what, n in counts.items())
    apply_template(fig)
    fig.update_layout(
        title={
            "text": f"{y.upper() if y == 'bleu' else y} against {x.upper() if x == 'aer' else x}",
            "subtitle": {"text": note},
        },
        xaxis_title_text=METRIC_TITLES.get(x, x),
        yaxis_title_text=METRIC_TITLES.get(y, y),
        legend={"title": {"text": "score (● Bahdanau, ◆ Luong)"}},
        width=560,
        height=400,
        margin={"t": 90},
    )
    for metric, axis in ((x, fig.layout.xaxis), (y, fig.layout.yaxis)):
        if metric in METRIC_BOUNDS:
            low, high = METRIC_BOUNDS[metric]
            axis.autorangeoptions = {"clipmin": low, "clipmax": high}
            axis.ticklabelstandoff = 8  # a marker on the edge does not cover the tick labels
    return fig
