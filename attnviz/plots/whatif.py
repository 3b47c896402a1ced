"""Explore's What-if: force one step's attention onto a source token, or replace a source word, and
re-decode. The figure of the two decodes with the changed steps outlined, and the helpers the view
needs: which steps changed, the two targets step by step, the source with one word replaced."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from attnviz.data import join_pieces
from attnviz.decoding import Alignment
from attnviz.errors import InputError
from attnviz.plots.compare import compare_heatmaps
from attnviz.plots.heatmap import GOLD_COLOR, fit_title


def changed_steps(a: list[str], b: list[str]) -> list[int]:
    """Target steps where two token lists differ (a step only one of them has counts as changed)."""
    n = max(len(a), len(b))
    return [t for t in range(n) if (a[t] if t < len(a) else None) != (b[t] if t < len(b) else None)]


def step_table(a: list[str], b: list[str], names: tuple[str, str]) -> pd.DataFrame:
    """The two targets step by step with a ``changed`` column."""
    n = max(len(a), len(b))
    changed = set(changed_steps(a, b))
    return pd.DataFrame(
        {
            "step": range(n),
            names[0]: [a[t] if t < len(a) else "" for t in range(n)],
            names[1]: [b[t] if t < len(b) else "" for t in range(n)],
            "changed": [t in changed for t in range(n)],
        }
    )


def source_words(tokens: list[str], char_level: bool) -> list[str]:
    """What the What-if view replaces: the source's words (subword pieces joined), or its characters
    for a character-level model (tokens without ``<eos>``)."""
    return list(tokens) if char_level else join_pieces(tokens)


def replace_word(tokens: list[str], index: int, word: str, char_level: bool) -> str:
    """The source text with word ``index`` of :func:`source_words` replaced by ``word``: a word of
    several subword pieces is replaced whole (``orange@@ farbenen`` by ``rot``)."""
    words = source_words(tokens, char_level)
    out = [*words[:index], word, *words[index + 1 :]]
    return "".join(out) if char_level else " ".join(out)


def whatif_figure(
    original: Alignment,
    changed: Alignment,
    changed_steps: list[int],
    names: tuple[str, str],
    max_width: int | None = None,
    title: str | None = None,
) -> go.Figure:
    """The two decodes side by side on one colour scale, with the changed target steps outlined,
    at most ``max_width`` px wide."""
    a, b = (html.escape(n, quote=False) for n in names)
    if a == b:
        raise InputError("give the two decodes different names")
    fig = compare_heatmaps({a: original, b: changed}, max_width=max_width)
    if title:
        text = html.escape(title, quote=False)
        fig.update_layout(title={"text": text, "y": 1, "yanchor": "top", "yref": "container", "pad": {"t": 8}})
        fit_title(fig)
    n_tgt, n_src = np.shape(changed.weights)
    outline = {"color": GOLD_COLOR, "width": 2}
    for t in (t for t in changed_steps if 0 <= t < n_tgt):  # the changed row of the right-hand map
        fig.add_shape(type="rect", x0=-0.5, x1=n_src - 0.5, y0=t - 0.5, y1=t + 0.5, xref="x2", yref="y2", line=outline)
    return fig
