"""The clicked cell, drawn in the browser.

A click on an Explore heatmap must show its cell at once. Redrawing the figure with an outline
costs a server round trip and a full Plotly redraw, so the figure stays the same and a small
browser-side layer (``attnviz_app/app_pages/explore/cursor.js``) outlines the cell on every map
and writes its weight and score the moment the click lands, and sends the cell on to the server,
whose detailed math panel follows.

The numbers are not sent twice: each map already holds its weights and scores (the heatmap's
``z`` and ``customdata``, or, for a local window's map, its hover text), and the browser layer
reads them from there and formats them as the hover does. What is built here is what the maps do
not hold: the cell, the charts' keys, and each panel's tokens as the axes show them.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from attnviz.decoding import Alignment
from attnviz.errors import InputError
from attnviz.plots.heatmap import display_tokens

CELL_COLOR = "#e6550d"  # the clicked cell's outline


def has_cell(al: Alignment, t: int, s: int) -> bool:
    """Whether ``al``'s map has the cell ``(t, s)`` (a shorter translation lacks the longer one's
    last rows)."""
    n_tgt, n_src = np.shape(al.weights)
    return 0 <= t < n_tgt and 0 <= s < n_src


def cursor_data(
    panels: Mapping[str, Alignment], cell: tuple[int, int], chart_keys: Mapping[str, str], values: str = "weights"
) -> dict:
    """What the browser layer needs: the cell ``(t, s)``, the Streamlit keys of the charts to
    outline it on, which matrix the maps draw (``values``: ``"weights"`` or ``"scores"``, the
    other one being the heatmaps' ``customdata``), and per panel (in display order) its tokens as
    the axes show them (unescaped: the browser sets them as text). Its size grows with the
    sentence's tokens, not with the map's cells: the numbers come from the maps.

    The cell may lie outside a shorter panel's map (that map shows no outline) but not outside
    all of them: :class:`InputError` then, when a panel has no chart key, and for other ``values``."""
    if values not in ("weights", "scores"):
        raise InputError(f"values must be 'weights' or 'scores', got {values!r}")
    t, s = (int(v) for v in cell)
    missing = [name for name in panels if name not in chart_keys]
    if missing:
        raise InputError(f"No chart key for panel(s) {missing}: pass one key per panel.")
    if not any(has_cell(al, t, s) for al in panels.values()):
        sizes = [np.shape(al.weights) for al in panels.values()]  # [tgt, src] each
        raise InputError(f"Cell (t={t}, s={s}) is outside every map ({sizes}): clamp it first.")
    out = [
        {
            "name": name,
            "source": display_tokens(al.source_tokens, escape=False),
            "target": display_tokens(al.target_tokens, escape=False),
        }
        for name, al in panels.items()
    ]
    charts = [chart_keys[n] for n in panels]
    return {"cell": [t, s], "color": CELL_COLOR, "charts": charts, "values": values, "panels": out}
