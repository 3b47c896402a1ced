"""A page's state in the URL: one browser history entry per user action, Back and Forward
restore the state of their entry, a copied link opens the same view.

Streamlit pushes a history entry for every message that changes ``st.query_params`` and, on
Back or Forward, reruns the page with the entry's query (a *history navigation*, during which
its writes replace the entry instead of pushing a new one). So a page:

- reads the query with :func:`url_to_read` at its top: on a session's first visit (a shared
  link) and on every history navigation, the URL is the truth;
- stages its whole state with :func:`stage_url` once it is known, and writes it with
  :func:`write_url` at its end, in one ``from_dict`` (one message, one entry). A fragment that
  reruns alone (a clicked cell) writes its own part with :func:`write_url` too.

Back on a page from another by the sidebar (which opens it bare), the state shown is written into
the sidebar's own entry in the browser (:func:`_replace_entry`), not pushed as a second entry.

The URL of a first visit stands for the state it opened: a bare URL for the page's defaults, a
link for what the page read from it (its unknown parts at their defaults). The first write is then
recorded, not pushed, so the entry the user arrived on is the state they saw first, and Back from
their first action returns to it (a corrected copy of a link would be a second entry that Back
lands on without a visible change).

Values that must survive a visit to another page are kept by the widgets themselves
(``persist_state="session"``); Explore's open tab by its keyed ``st.tabs``, whose ``on_change``
records the view the page opens next (``explore.front.view_changed``).
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

import streamlit as st

_STAGED = "_url_staged"  # {param: text}: the page's state as it will be written
_WRITTEN = "_url_written"  # {param: text}: the state the URL stands for (None before a first write)
_FIRST = "_url_first"  # True while a first visit's URL stands for the state it opened
_ARRIVED = "_url_arrived"  # {param: text}: the query of that first visit
_BARE = "_url_bare"  # {param: text}: the state shown when the page was last reached bare from another page


def _history_navigation() -> bool:
    """Whether Back or Forward started this run (Streamlit's script-run context says it)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx  # internal: the pinned version has it

    ctx = get_script_run_ctx()
    return bool(getattr(ctx, "is_history_navigation", False))


def url_to_read() -> dict[str, str] | None:
    """The URL's query when it is the truth for this run, else None.

    It is on a session's first visit with a query (a shared link) and on Back or Forward (then an
    empty query is read too: the entry of a bare URL stands for the defaults). Any other run keeps
    the session's state, whatever the address bar holds.
    """
    query = st.query_params.to_dict()
    first = _WRITTEN not in st.session_state
    if first:
        st.session_state[_WRITTEN] = None
        st.session_state[_FIRST] = True
        st.session_state[_ARRIVED] = query
        return query or None
    if _history_navigation():
        if not query and st.session_state.get(_BARE):
            query = dict(st.session_state[_BARE])  # the page's bare entry, from the sidebar: what it showed
        st.session_state[_WRITTEN] = query
        st.session_state[_FIRST] = False
        return query
    return None


def defaults_were_shown() -> None:
    """The session's first page showed the defaults before any write (Explore's front page drawn from
    its record, explore/front.py) and the user acted on it: the bare URL stands for those defaults, so
    the state the action leads to is a new entry that Back leaves."""
    st.session_state[_WRITTEN] = {}
    st.session_state[_FIRST] = False


def _text(value: object) -> str:
    return "" if value is None or value is False else str(value)


def stage_url(values: dict[str, object], replace: bool = False) -> None:
    """Set these parameters of the state to be written (None, False and "" leave one out);
    ``replace`` drops every parameter not given."""
    staged = {} if replace else dict(st.session_state.get(_STAGED) or {})
    for name, value in values.items():
        text = _text(value)
        if text:
            staged[name] = text
        else:
            staged.pop(name, None)
    st.session_state[_STAGED] = staged


def write_url(values: dict[str, object] | None = None) -> None:
    """Stage ``values``, then write the staged state as the URL's query in one message (one history
    entry) when it differs from what the URL stands for."""
    if values:
        stage_url(values)
    want = dict(st.session_state.get(_STAGED) or {})
    written = st.session_state.get(_WRITTEN)
    query = st.query_params.to_dict()
    if st.session_state.get(_FIRST):
        # the first visit's URL stands for this state while the address bar still shows it; back from
        # another page by the sidebar it shows the bare page, and the state is written as any change
        if (written is None or want == written) and query == st.session_state.get(_ARRIVED, {}):
            st.session_state[_WRITTEN] = want
            return
        st.session_state[_FIRST] = False
    if want == written and want == query:
        return
    if not query and want == written:  # the same state on a bare page: back by the sidebar from another page
        st.session_state[_BARE] = want  # (a first action from a bare URL changes the state: that entry keeps its own)
        _replace_entry(want)
        return
    st.session_state[_WRITTEN] = want
    if want != query:
        st.query_params.from_dict(want)


def _replace_entry(query: dict[str, str]) -> None:
    """Write ``query`` into the history entry the sidebar just pushed for this page, in the browser
    (``history.replaceState``): the address bar holds the state shown, and Back leaves the page at
    once. ``st.query_params`` would push a second entry that Back lands on without a visible change.
    The browser sends the query with the next rerun, so the server reads it then."""
    search = json.dumps("?" + urlencode(query))
    script = (
        f"<script>(() => {{ if (!window.location.search) window.history.replaceState("
        f"window.history.state, '', window.location.pathname + {search}); }})();</script>"
    )
    with st.sidebar:
        st.html(script, unsafe_allow_javascript=True)
