"""When a browser session ends. No Streamlit here: the app tells this module about its sessions
through :func:`use_web_sessions` (attnviz_app/app_pages/shared/uploads.py).

A session ends some time after its tab closes: the web server keeps a disconnected session for
:func:`reconnect_window` seconds in case it reconnects. The app reports a disconnect with
:func:`session_disconnected`; :func:`end_sessions`, called by the uploads' janitor
(:mod:`attnviz.server.upload_ledger`) when :data:`LEFT` wakes it, checks that the session did not
come back once that time has passed, and has the web server free its own copy of the session's
uploaded bytes (:attr:`WebSessions.free`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class WebSessions:
    """What the web server says about its sessions. The default is no server (a script, a test):
    no session is seen connected, a disconnected one ends at once, nothing is kept to free."""

    reconnect_window: Callable[[], float] = lambda: 0.0  # seconds a disconnected session may come back
    connected: Callable[[str], bool | None] = lambda session: None  # whether it is connected; None: no server
    free: Callable[[str], None] = lambda session: None  # drop what the server keeps of an ended session


_web = WebSessions()


def use_web_sessions(web: WebSessions) -> None:
    """Ask ``web`` about sessions from now on (the app gives Streamlit's)."""
    global _web
    _web = web


def reconnect_window() -> float:
    """Seconds the web server keeps a disconnected session that may come back."""
    return _web.reconnect_window()


class Sessions:
    """When each session holding an upload was last seen disconnected (it ends ``reconnect_window``
    seconds later unless it came back)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._gone_since: dict[str, float] = {}

    def seen(self, session: str) -> None:
        """The session ran a script: it is alive."""
        with self._lock:
            self._gone_since.pop(session, None)

    def disconnected(self, session: str) -> None:
        with self._lock:
            self._gone_since.setdefault(session, time.monotonic())

    def ended(self, session: str) -> bool:
        """Whether the session is gone for good (connected again: no; never seen to leave: no)."""
        connected = _web.connected(session)
        if connected:
            self.seen(session)
            return False
        if connected is not None:
            # not connected: noted here too, as the release hook fires once per registration (a
            # session that reconnected and ran no script since has none)
            self.disconnected(session)
        with self._lock:
            since = self._gone_since.get(session)
        return since is not None and time.monotonic() - since >= reconnect_window()

    def expire(self) -> set[str]:
        """The sessions that ended since the last call (forgotten from now on)."""
        with self._lock:
            candidates = list(self._gone_since)
        ended = {session for session in candidates if self.ended(session)}
        with self._lock:
            for session in ended:
                self._gone_since.pop(session, None)
        return ended

    def next_end(self) -> float:
        """The monotonic time at which the next disconnected session may be ended (inf: none)."""
        with self._lock:
            return min(self._gone_since.values(), default=float("inf")) + reconnect_window()


SESSIONS = Sessions()
LEFT = threading.Event()  # set when a session disconnects: the uploads' janitor wakes up


def session_seen(session: str) -> Callable[[], bool]:
    """``session`` ran a script: it is alive. Returns the ``alive()`` test of its holds."""
    SESSIONS.seen(session)
    return lambda: not SESSIONS.ended(session)


def session_disconnected(session: str) -> None:
    """The web server saw ``session`` disconnect (or shut down). Only takes note and wakes the
    janitor: it may run on the server's event loop."""
    SESSIONS.disconnected(session)
    LEFT.set()


def end_sessions() -> set[str]:
    """The sessions that ended since the last call, after the web server freed what it kept of each."""
    ended = SESSIONS.expire()
    for session in ended:
        _web.free(session)
    return ended


def next_end() -> float:
    """The monotonic time at which the next disconnected session may be ended (inf: none)."""
    return SESSIONS.next_end()
