"""Markup carried into a translation, shown the one way every page shows it: the source and the translation
side by side with each element's words in one colour, the marked-up translation as text, and a table of
where each element went. The user's markup is only ever shown as text, never rendered."""

from __future__ import annotations

import html

import streamlit as st

from attnviz.links import MAX_MARKUP_CHARS, MarkupResult, Span
from attnviz.plots import coloured_words

SPLITS = {"hull": "first to last linked word", "block": "largest contiguous run"}
RULES = (
    "Each element covers the target words linked to its source words (a tag inside a word widens to the word). "
    "Linked words that are not contiguous are *split*: the split rule picks which words to cover. An element "
    "with no linked word (*unaligned*), a <br/> or a {placeholder} goes next to the nearest linked source word's "
    "translation. A child stays inside its parent and crossing elements are cut (*crossing*), so the output is "
    "well-nested. Placeholders are never given to the model."
)


def default_markup(text: str) -> str:
    """``text`` with its second word in bold (its first if it has one), as a starting point."""
    words = [html.escape(w, quote=False) for w in text.split()]
    if words:
        k = 1 if len(words) > 1 else 0
        words[k] = f"<b>{words[k]}</b>"
    return " ".join(words)


def markup_box(key: str, text: str) -> str:
    """The box a sentence with inline markup is typed in, starting from ``text`` with a word in bold
    (:func:`default_markup`) while it is empty; what is typed outlives a visit to another page."""
    if not st.session_state.get(key):
        st.session_state[key] = default_markup(text)
    return st.text_area(
        "Source with markup",
        key=key,
        max_chars=MAX_MARKUP_CHARS,
        height=80,
        help="Inline tags (<b>, <i>, <a href=...>, <span>, ...), <br/> and {placeholders}; entities such as &amp; "
        "are read as their character. Press Ctrl+Enter to apply.",
        persist_state="session",
    )


def show_carried(result: MarkupResult, key: str) -> None:
    """The coloured source and translation, the marked-up translation, and the table (keyed ``{key}_table``)."""
    labels = [s.element.label for s in result.spans]
    src_col, tgt_col = st.columns(2)
    src_col.caption("Source (the text the model reads)")
    src_col.html(coloured_words(result.source_words, [s.source_words for s in result.spans], labels))
    tgt_col.caption("Translation, with the markup carried over")
    tgt_col.html(coloured_words(result.target_words, [s.target_words for s in result.spans], labels))
    st.code(result.marked_translation, language=None, wrap_lines=True)
    rows = [_row(k, s, result) for k, s in enumerate(result.spans)]
    if rows:
        st.dataframe(rows, hide_index=True, key=f"{key}_table")
    else:
        st.caption("No markup to carry.")


def _words(words: list[str], r: tuple[int, int]) -> str:
    start, end = r
    if start == end:
        return f"before word {start}" if start < len(words) else "at the end"
    return f"{start}-{end - 1}: {' '.join(words[start:end])}" if end > start + 1 else f"{start}: {words[start]}"


def _row(k: int, span: Span, result: MarkupResult) -> dict:
    return {
        "": k + 1,
        "element": span.element.label,
        "attributes": span.element.attributes.strip(),
        "source words": _words(result.source_words, span.source_words),
        "target words": _words(result.target_words, span.target_words),
        "flags": ", ".join(span.flags),
    }
