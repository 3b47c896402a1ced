"""A sample of a corpus's alignments as one self-contained HTML page: a summary, then one section per
sentence (worst first) with its word-level attention map and links, scored against gold or against
eflomal's links.

Pure: sentences in, an HTML string out. Every piece of text is escaped (:func:`html.escape`; the figures'
words go through :func:`attnviz.plots.heatmap.display_tokens`), so no sentence is ever read as HTML;
plotly.js is included once, inline, so the page opens offline.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from attnviz.errors import InputError
from attnviz.links import ReportSentence
from attnviz.plots.links import gold_figure, links_figure

MEASURES = {  # measure -> (its name on the page, whether higher is worse)
    "AER": ("AER against gold", True),
    "agreement": ("agreement (F1) with eflomal", False),
}
MAX_WIDTH = 900  # px: each map fits a laptop screen
_STYLE = """body{font-family:system-ui,sans-serif;margin:1.5em;max-width:1000px;color:#222}
section{border-top:1px solid #ccc;padding-top:.8em;margin-top:1.2em}
code{background:#f4f4f4;padding:.1em .3em;word-break:break-all}
.score{font-weight:bold}table{border-collapse:collapse}td,th{padding:.1em .8em;text-align:left}"""


@dataclass(frozen=True)
class ReportSummary:
    """What the page says at the top: the model, the data, the link method, the measure (a key of
    :data:`MEASURES`), the command that wrote it, and the pairs sampled but not shown (with why)."""

    model: str
    data: str
    method: str
    measure: str
    command: str
    skipped: int = 0


def worst_first(sentences: list[ReportSentence], measure: str) -> list[ReportSentence]:
    """The sentences from the worst score to the best (highest AER, or lowest agreement, first)."""
    if measure not in MEASURES:
        raise InputError(f"unknown measure {measure!r}; choose one of {', '.join(MEASURES)}")
    higher_is_worse = MEASURES[measure][1]
    return sorted(sentences, key=lambda s: (-s.score if higher_is_worse else s.score, s.index))


def sentence_figure(s: ReportSentence, method: str) -> go.Figure:
    """The sentence's attention map with its links: scored against gold (hit, wrong, miss) when it has
    gold, else beside eflomal's."""
    title = f"pair {s.index}"
    if s.sure is not None:
        words = (s.source_words, s.target_words)
        return gold_figure(s.weights, *words, s.links, s.sure, s.possible or (), title, MAX_WIDTH)
    layers = {f"attention ({method})": ("attention", s.links)}
    if s.eflomal is not None:
        layers["eflomal"] = ("eflomal", s.eflomal)
    return links_figure(s.weights, s.source_words, s.target_words, layers, title, MAX_WIDTH)


def _summary(summary: ReportSummary, sentences: list[ReportSentence]) -> str:
    name = MEASURES[summary.measure][0]
    mean = f"{np.mean([s.score for s in sentences]):.3f}" if sentences else "-"
    rows = [
        ("model", summary.model),
        ("data", summary.data),
        ("word links", summary.method),
        (f"mean {name}", mean),
        ("sentences", f"{len(sentences)}" + (f" ({summary.skipped} more sampled, unreadable)" * bool(summary.skipped))),
    ]
    cells = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in rows)
    order = "highest AER first" if MEASURES[summary.measure][1] else "lowest agreement first"
    return (
        f"<h1>Alignments of {len(sentences)} sampled sentences</h1><table>{cells}</table>"
        f"<p>Command: <code>{html.escape(summary.command)}</code></p><p>Worst first ({order}).</p>"
    )


def _section(s: ReportSentence, summary: ReportSummary, figure: str) -> str:
    name = MEASURES[summary.measure][0]
    src, tgt = html.escape(" ".join(s.source_words)), html.escape(" ".join(s.target_words))
    return (
        f'<section id="pair-{s.index}"><h2>pair {s.index}: <span class="score">{html.escape(name)} '
        f"{s.score:.3f}</span></h2><p>source: {src}<br>target: {tgt}</p>{figure}</section>"
    )


def report_html(sentences: list[ReportSentence], summary: ReportSummary) -> str:
    """The page: the summary, then one section per sentence, worst first, each with its figure (plotly.js
    inlined once, in the first figure)."""
    ordered = worst_first(sentences, summary.measure)
    sections = []
    for k, s in enumerate(ordered):
        fig = sentence_figure(s, summary.method)
        div = fig.to_html(full_html=False, include_plotlyjs=k == 0, config={"displaylogo": False})
        sections.append(_section(s, summary, div))
    title = html.escape(f"attnviz alignment report: {summary.model} on {summary.data}")
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{_STYLE}</style></head><body>{_summary(summary, ordered)}{''.join(sections)}</body></html>\n"
    )
