"""Cleaning up when the server is stopped by a signal: ``docker stop`` and systemd send SIGTERM,
Ctrl+C sends SIGINT.

``streamlit run app.py`` serves the app through uvicorn, which catches SIGTERM and SIGINT while it
serves, shuts the server down gracefully, puts back the handlers it found, and raises the signal
again. Python's default SIGTERM action ends the process at once, without ``atexit`` hooks, so what
the server made (its upload folder) stayed behind. :func:`clean_on_signals` installs, before
uvicorn starts, handlers that uvicorn puts back and so calls last: each runs the cleanup, then
does what the handler it replaced would have done (Python's default: KeyboardInterrupt for
SIGINT; for SIGTERM, ending the process by that signal, so that the exit status still says so).

Only the main thread may install signal handlers: app.py calls this when Streamlit imports it to
find the server, in the main thread. Standard library only: that happens before attnviz (and
torch) is loaded.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable
from types import FrameType

SIGNALS = (signal.SIGTERM, signal.SIGINT)
_MARK = "_attnviz_cleanup"  # on our handlers: installing twice (app.py imported twice) chains once

log = logging.getLogger(__name__)


def _chained(cleanup: Callable[[], None], previous: Callable[[int, FrameType | None], object] | int | None) -> Callable:
    """A handler that runs ``cleanup`` and then ``previous`` (a handler, or SIG_DFL / SIG_IGN)."""

    def handler(signum: int, frame: FrameType | None) -> None:
        try:
            cleanup()
        except Exception:  # the server must still stop
            log.exception("cleaning up on signal %s failed", signum)
        if callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:  # the default action (SIG_DFL, or a handler not set from Python)
            signal.signal(signum, signal.SIG_DFL)
            signal.raise_signal(signum)

    setattr(handler, _MARK, True)
    return handler


def clean_on_signals(cleanup: Callable[[], None], signals: tuple[int, ...] = SIGNALS) -> bool:
    """Run ``cleanup`` when one of ``signals`` stops the process, then what was there before.
    Call it from the main thread (elsewhere nothing is installed and False is returned); a second
    call leaves the handlers of the first in place."""
    if threading.current_thread() is not threading.main_thread():
        return False
    for signum in signals:
        previous = signal.getsignal(signum)
        if not getattr(previous, _MARK, False):
            signal.signal(signum, _chained(cleanup, previous))
    return True
