"""Your model, Hugging Face folder: the heads. Every layer x head as a small map in a grid as wide as the
page (on a colour scale the user picks, titled with each head's AER against the pair's gold links), a click
opening a head, and the pickers of the opened attention and the heads compared with it."""

from __future__ import annotations

import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.external import CrossAttention, Pick, parse_heads
from attnviz.plots import GRID_SCALES, grid_layout, heads_grid, plot_config
from attnviz_app.app_pages.explore.screen import page_width
from attnviz_app.app_pages.shared.common import error_text, escape_markdown
from attnviz_app.app_pages.yours import hf_cache

LAYER_KEY, HEAD_KEY, COMPARE_KEY = "yours_hf_layer", "yours_hf_head", "yours_hf_compare"
GRID_KEY, SCALE_KEY = "yours_hf_grid", "yours_hf_grid_scale"
ALL = "all"
MAX_GRID_HEADS = 16 * 16
MAX_COMPARED = 3
EXPANDER_PAD_PX = 36  # an expander's border and padding, each side together
SCALES = {"map": "per map", "grid": "shared across the grid", "fixed": "fixed 0..1"}
SCALE_CAPTIONS = {
    "map": "Colours per map: each map runs from 0 to its own largest weight, so a diffuse head's pattern shows "
    "as clearly as a sharp one's (compare heads' sharpness with the shared scale).",
    "grid": "Colours shared across the grid: 0 to the largest weight of any head, so heads compare by sharpness.",
    "fixed": "Colours fixed from 0 to 1 for every map.",
}


def open_head(layer: int | str, head: int | str) -> None:
    """Open this attention in the pickers (:data:`ALL` for an average)."""
    st.session_state[LAYER_KEY], st.session_state[HEAD_KEY] = layer, head


def compare_heads(heads: list[tuple[int, int]]) -> None:
    """Put these heads (the first :data:`MAX_COMPARED`) into the compare box."""
    st.session_state[COMPARE_KEY] = " ".join(f"{layer}:{head}" for layer, head in heads[:MAX_COMPARED])


def _open_clicked() -> None:
    """A click on a map of the grid opens that head in the pickers."""
    points = st.session_state[GRID_KEY].selection.get("points", [])
    data = points[0].get("customdata") if points else None
    if data:
        open_head(int(data[0]), int(data[1]))


def grid(c: CrossAttention, key: tuple, gold: tuple | None) -> None:
    """Every head as a small map, each titled with its AER when gold links are given; a click opens one."""
    if c.layers * c.heads > MAX_GRID_HEADS:
        st.caption(f"{c.layers} × {c.heads} heads are too many for one grid; pick them below.")
        return
    stack, src, tgt = hf_cache.stack(key)
    aer = None
    if gold:
        try:
            aer = hf_cache.aer(key, gold)
        except AttnvizError as e:
            st.error(error_text(e))
    scale = (
        st.segmented_control(
            "Colour scale",
            GRID_SCALES,
            format_func=SCALES.get,
            default="map",
            key=SCALE_KEY,
            help="Per map shows each head's pattern; shared or fixed compares how sharp the heads are.",
            persist_state="session",
        )
        or "map"
    )
    layer, head = st.session_state.get(LAYER_KEY), st.session_state.get(HEAD_KEY)
    chosen = (layer, head) if isinstance(layer, int) and isinstance(head, int) else None
    width = page_width() - EXPANDER_PAD_PX
    fig = heads_grid(stack, src, tgt, aer, chosen, width, scale)
    st.plotly_chart(
        fig,
        key=GRID_KEY,
        on_select=_open_clicked,
        selection_mode="points",
        width="content",
        config=plot_config("attnviz-heads"),
    )
    ticks = grid_layout(c.layers, c.heads, src, tgt, width, aer is not None).ticks
    words = "target words left of the first column, source words under the last row" if ticks else "no room for them"
    notes = [
        "Click a map to open its head below. Each map: rows are target words, columns source words, pieces "
        f"merged, <eos> hidden; word ticks: {words}; hover a cell for its words and weight.",
        SCALE_CAPTIONS[scale],
    ]
    if aer is not None:
        notes.append(
            "Titles give each head's AER against the gold links (argmax links; the lowest AER in bold, "
            "on every head that has it)."
        )
    st.caption(escape_markdown(" ".join(notes)))


def placeholder(layers: int, heads: int) -> str:
    """Two heads the model has, written as the compare box reads them: the last layer's first two (or the
    last two layers' first heads, or the one head)."""
    last = layers - 1
    picks = [(last, 0), (last, 1)] if heads > 1 else [(last, 0), (last - 1, 0)] if layers > 1 else [(0, 0)]
    return " ".join(f"{layer}:{head}" for layer, head in picks)


def picks(c: CrossAttention) -> tuple[Pick, list[Pick]]:
    """The opened attention (layer and head pickers) and the heads to compare it with."""
    if st.session_state.get(LAYER_KEY) not in [ALL, *range(c.layers)]:
        st.session_state[LAYER_KEY] = ALL
    if st.session_state.get(HEAD_KEY) not in [ALL, *range(c.heads)]:
        st.session_state[HEAD_KEY] = ALL
    a, b, d = st.columns([1, 1, 3])
    layer = a.selectbox(
        "Layer",
        [ALL, *range(c.layers)],
        key=LAYER_KEY,
        help="0-based; all: every layer averaged",
        persist_state="session",
    )
    head = b.selectbox(
        "Head",
        [ALL, *range(c.heads)],
        key=HEAD_KEY,
        disabled=layer == ALL,
        help="0-based; all: the layer's heads averaged",
        persist_state="session",
    )
    compare = d.text_input(
        f"Compare with heads (layer:head, up to {MAX_COMPARED})",
        key=COMPARE_KEY,
        placeholder=placeholder(c.layers, c.heads),
        help="Each listed head is shown beside the opened one on one colour scale.",
        persist_state="session",
    )
    opened = Pick() if layer == ALL else Pick(layer, None if head == ALL else head)
    others = [Pick(*pair) for pair in parse_heads(compare)[:MAX_COMPARED]] if compare.strip() else []
    return opened, others
