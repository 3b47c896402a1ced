"""State that survives page changes, and Explore's state in the URL.

Streamlit drops a widget's value when the page that owns the widget is not drawn. app.py calls
:func:`keep_across_pages` on every run, before the page: assigning a widget's value back to
itself interrupts that clean-up, so task, sentence, beam, the Train form and the data choice are
still there when the user comes back.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

# Widget keys whose values outlive a visit to another page (buttons and uploaders cannot be set).
KEPT = (
    # Explore
    "explore_task", "explore_score", "explore_style", "explore_text", "explore_beam", "explore_view",
    "explore_step", "explore_image_format", "explore_eos", "explore_words",
    # Train
    "train_score", "train_style", "train_encoder", "train_emb", "train_hidden", "train_attn", "train_heads",
    "train_epochs", "train_batch", "train_lr", "train_n", "train_subwords", "train_probe", "train_name",
    "train_device",
    # data pickers (Data, Train, Compare)
    "data_kind", "data_task", "data_m30k", "data_n", "data_split", "train_kind", "train_task", "train_m30k",
    "data_src_col", "data_tgt_col", "train_src_col", "train_tgt_col",
    # Compare, Evaluate, Learn
    "cmp_models", "cmp_values", "cmp_sentence", "cmp_eos", "eval_split", "eval_n", "eval_beam", "eval_models",
    "learn_model", "learn_score", "learn_worked_score",
)  # fmt: skip


def keep_across_pages() -> None:
    """Re-assign every kept widget value so that it survives the page change."""
    for key in KEPT:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def seed_from_url(params: dict[str, tuple[str, Callable[[str], object]]]) -> None:
    """On a session's first visit, widget values from the URL's query string.

    ``params`` maps a query parameter to ``(session key, parse)``; a value that does not parse is
    ignored (the widget keeps its default), so a hand-edited link cannot break the page.
    """
    if st.session_state.get("_url_seeded"):
        return
    st.session_state["_url_seeded"] = True
    for name, (key, parse) in params.items():
        raw = st.query_params.get(name)
        if raw is None:
            continue
        try:
            st.session_state[key] = parse(raw)
        except (TypeError, ValueError):
            continue


def write_url(values: dict[str, object]) -> None:
    """The page's state as the URL's query string (only what changed is written)."""
    for name, value in values.items():
        text = "" if value is None else str(value)
        if not text:
            st.query_params.pop(name, None)
        elif st.query_params.get(name) != text:
            st.query_params[name] = text
