"""Explore's Alignment view, markup part: a sentence with inline markup translated and its tags carried along
the word links, the source and the translation side by side with each element's words in one colour, and a
box per element on the word-level attention. The user's markup is only ever shown as text."""

from __future__ import annotations

import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.links import SPLIT_RULES
from attnviz.plots import markup_figure
from attnviz.store import ModelEntry
from attnviz_app.app_pages.explore.links import Method, carried_markup, data_of, reads_characters
from attnviz_app.app_pages.explore.views import chart, columns, panel_width
from attnviz_app.app_pages.shared.common import error_text, escape_markdown, model_version
from attnviz_app.app_pages.shared.markup_ui import RULES, SPLITS, markup_box, show_carried

MARKUP_KEY, TARGET_KEY, ALIGNER_KEY, SPLIT_KEY = (
    "explore_markup_text",
    "explore_markup_target",
    "explore_markup_aligner",
    "explore_markup_split",
)
ALIGNERS = {"attention": "attention (the method above)", "eflomal": "eflomal"}


def markup_view(entries: dict[str, ModelEntry], method: Method, text: str, image_format: str) -> None:
    """The markup box, the choice of links and split rule, and each shown model's carried markup."""
    source = markup_box(MARKUP_KEY, text)
    left, right = st.columns(2)
    aligner = (
        left.segmented_control(
            "Carry along the links of",
            list(ALIGNERS),
            format_func=ALIGNERS.get,
            key=ALIGNER_KEY,
            default="attention",
            persist_state="session",
        )
        or "attention"
    )
    split = (
        right.segmented_control(
            "Linked words not contiguous: cover the",
            SPLIT_RULES,
            format_func=SPLITS.get,
            key=SPLIT_KEY,
            default="hull",
            persist_state="session",
        )
        or "hull"
    )
    target = st.text_input(
        "Carry into",
        key=TARGET_KEY,
        max_chars=1000,
        placeholder="the model's own translation",
        help="A translation of your own; empty: each model's own translation.",
        persist_state="session",
    )
    many = len(entries) > 1
    width = panel_width(entries, stack=True)
    for col, (name, entry) in zip(columns(entries, stack=True), entries.items(), strict=True):
        with col:
            _panel(name if many else "", entry, method, aligner, source, target.strip(), split, width, image_format)
    st.caption(escape_markdown(RULES).replace(r"\*", "*"))


def _panel(
    panel: str,
    entry: ModelEntry,
    method: Method,
    aligner: str,
    source: str,
    target: str,
    split: str,
    width: int,
    fmt: str,
) -> None:
    """One model's carried markup: coloured source and translation, the marked-up text, the table, the map."""
    model = model_version(entry)
    if panel:
        st.markdown(f"**{escape_markdown(panel)}** · {escape_markdown(entry.name)}")
    if reads_characters(model):
        st.info("This model reads characters; markup is carried over words, so pick a model that reads words.")
        return
    try:
        data = data_of(model) if aligner == "eflomal" else None
        with st.spinner("Carrying the markup…"):
            result, reading = carried_markup(model, method, data, source, target, split)
    except AttnvizError as e:
        st.error(error_text(e))
        return
    key = f"explore_markup_{panel or 'one'}"
    show_carried(result, key)
    links = "eflomal" if aligner == "eflomal" else f"attention ({method.name})"
    spans = [(s.element.label, s.source_words, s.target_words) for s in result.spans]
    title = f"{entry.name}: markup carried along the {links} links"
    fig = markup_figure(
        reading.weights, reading.source_words, reading.target_words, result.links, spans, title, width, f"{links} links"
    )
    chart(fig, f"{key}_map", fmt, "markup", panel or None)
