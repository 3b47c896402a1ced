"""The browser-side cell cursor: a click outlines its cell on every map and shows its weight and
score at once (``cursor.js``), read from the maps themselves; :func:`attnviz.plots.cursor.cursor_data`
says which cell, which charts and which tokens."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import streamlit as st

from attnviz.decoding import Alignment
from attnviz.plots import cursor_data

_CSS = """
.attnviz-readout { font-size: 0.9rem; color: rgb(49, 51, 63); padding: 0.1rem 0 0.2rem;
  font-variant-numeric: tabular-nums; overflow-wrap: anywhere; min-height: 1.4rem; white-space: pre-line; }
.attnviz-readout::before { content: "▢ "; color: var(--cell); font-weight: 700; }
"""
_cursor = st.components.v2.component(
    "attnviz_cell_cursor",
    html='<div class="attnviz-readout" aria-live="polite"></div>',
    css=_CSS,
    js=(Path(__file__).with_name("cursor.js")).read_text(encoding="utf-8"),
)


def cell_cursor(
    panels: dict[str, Alignment],
    cell: tuple[int, int],
    chart_keys: dict[str, str],
    key: str,
    on_click: Callable[[tuple[int, int]], None],
    values: str = "weights",
) -> None:
    """Mount the cursor for these maps (one ``chart_keys`` entry per panel, each drawing ``values``)
    at ``cell``; ``on_click((t, s))`` runs before the rerun a click on a map starts."""

    def clicked() -> None:
        cell = (st.session_state.get(key) or {}).get("cell")
        if isinstance(cell, list) and len(cell) == 2 and all(isinstance(v, int) for v in cell):
            on_click((cell[0], cell[1]))

    _cursor(key=key, data=cursor_data(panels, cell, chart_keys, values), height="content", on_cell_change=clicked)
