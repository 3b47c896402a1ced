"""Streamlit's side of the uploads kept by :mod:`attnviz.server.upload_ledger`: its sessions
(:mod:`attnviz.server.web_sessions`).

Importing this module tells the library about Streamlit's sessions: how long a disconnected one
is kept (``server.disconnectedSessionTTL``), whether one is connected, and how to free
Streamlit's own copy of an ended session's uploaded bytes (Streamlit 1.67 never frees them for a
session that expires while disconnected). A disconnect is seen through the ``on_release`` of a
session-scoped ``st.cache_resource``: Streamlit clears those caches when a session disconnects
or shuts down.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import streamlit as st
from streamlit import runtime
from streamlit.errors import StreamlitAPIException

from attnviz.server import WebSessions, session_disconnected, session_seen, use_web_sessions


def _reconnect_window() -> float:
    return float(st.get_option("server.disconnectedSessionTTL"))


def _connected(session: str) -> bool | None:
    """Whether ``session`` is connected to this server; None when no server runs (AppTest, a script)."""
    return runtime.get_instance().is_active_session(session) if runtime.exists() else None


def _free(session: str) -> None:
    if runtime.exists():
        runtime.get_instance().uploaded_file_mgr.remove_session_files(session)


STREAMLIT_SESSIONS = WebSessions(reconnect_window=_reconnect_window, connected=_connected, free=_free)
use_web_sessions(STREAMLIT_SESSIONS)


@st.cache_resource(scope="session", on_release=session_disconnected, show_spinner=False)
def _end_watch(session: str) -> str:
    """A session-scoped resource: Streamlit releases it when ``session`` disconnects."""
    return session


def session_holder(session: str) -> Callable[[], bool]:
    """Mark ``session`` as alive, watch for its end, and return the ``alive()`` test of its holds."""
    alive = session_seen(session)
    with contextlib.suppress(StreamlitAPIException):  # outside a script run: no session to watch
        _end_watch(session)
    return alive
