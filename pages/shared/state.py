"""Explore's state in the URL: a view shared by its link opens as it was.

Values that must survive a visit to another page are kept by the widgets themselves
(``persist_state="session"``); the open tab, which ``st.tabs`` cannot keep, by :func:`keep_tab`.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st


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


def keep_tab(key: str, tabs: list[str]) -> None:
    """Before ``st.tabs(key=key)``: the tab open when the user last left the page (or the first)."""
    kept = f"{key}__kept"
    if st.session_state.get(key) not in tabs:
        st.session_state[key] = st.session_state.get(kept) if st.session_state.get(kept) in tabs else tabs[0]
    st.session_state[kept] = st.session_state[key]
