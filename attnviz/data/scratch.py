"""Folders of this user's own below the system's temporary folder (``$TMPDIR``, ``/tmp``).

Each is named for its user (``attnviz-uploads-1000``), so on a shared machine the folder another user
made (0755, or 0700 under umask 077) never stands in the way, and a folder someone else made under this
user's name is refused by name, never trusted."""

from __future__ import annotations

import getpass
import os
import re
import tempfile
from pathlib import Path

from attnviz.errors import DataError


def _user() -> str:
    """The user's number where the system has one (POSIX), else the login name in safe letters."""
    if hasattr(os, "getuid"):
        return str(os.getuid())
    try:
        name = getpass.getuser()
    except Exception:  # no login name from the environment or the password database
        name = "user"
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:32] or "user"


def user_temp(name: str) -> Path:
    """``$TMPDIR/<name>-<user>``: the folder ``name`` of this user (not made here)."""
    return Path(tempfile.gettempdir()) / f"{name}-{_user()}"


def own_folder(path: Path, setting: str) -> Path:
    """``path``, made (0700, its parents as needed) when missing; a DataError naming ``setting`` (the
    variable that moves it) when it cannot be made or written or belongs to another user."""
    advice = f"set {setting} to a folder of yours"
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = path.stat()
    except OSError as e:
        raise DataError(f"cannot use {path} ({e.strerror or type(e).__name__}); {advice}") from None
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise DataError(f"{path} belongs to another user; {advice}")
    if not os.access(path, os.W_OK | os.X_OK):
        raise DataError(f"cannot write in {path}; {advice}")
    return path
