"""How a command ends when it is stopped: Ctrl+C (exit 130) or SIGTERM (exit 143), one line on stderr.
Light on purpose: the entry point imports it before anything that loads torch."""

from __future__ import annotations

import sys


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, ``docker stop``, ``timeout``): ended as an interruption is, with what is saved
    said and partial files removed, and exit status 143."""


def stopped(command: str, e: KeyboardInterrupt, saved: str = "") -> int:
    """The line and exit status of a run stopped by Ctrl+C (130) or SIGTERM (143)."""
    how = "terminated" if isinstance(e, Terminated) else "interrupted"
    print(f"attnviz{f' {command}' if command else ''}: {how}{saved}", file=sys.stderr)
    return 143 if isinstance(e, Terminated) else 130
