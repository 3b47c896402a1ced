"""Where this server keeps uploaded files: its own folder, ``UPLOAD_ROOT/server-PID``, claimed with
a lock that dies with the process. The first use deletes the folders of servers that are gone
(stopped or killed), so an upload nothing alive uses does not outlive its server; the folder goes
when the server stops (:func:`remove_server_folder`, also called at exit)."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import threading
from pathlib import Path

from attnviz.data import own_folder
from attnviz.store import hold_lock, is_locked, release_lock, upload_root

UPLOAD_ROOT = upload_root()
SERVER_PREFIX = "server-"


def _server_lock(folder: Path) -> Path:
    return folder.with_name(f"{folder.name}.lock")


def forget_dead_servers() -> list[Path]:
    """Delete the upload folders of server processes that are gone, and upload files loose in
    ``UPLOAD_ROOT`` (outside any server's folder). Returns what was deleted."""
    removed = []
    try:
        entries = list(UPLOAD_ROOT.iterdir())
    except OSError:  # none yet
        return []
    for entry in entries:
        if entry.is_dir() and entry.name.startswith(SERVER_PREFIX):
            lock = _server_lock(entry)
            if is_locked(lock):
                continue  # a live server's
            shutil.rmtree(entry, ignore_errors=True)
            lock.unlink(missing_ok=True)
            removed.append(entry)
        elif entry.is_file() and entry.suffix != ".lock":
            entry.unlink(missing_ok=True)
            removed.append(entry)
    return removed


_claims: list[tuple[Path, Path, int | None]] = []  # the folders this process made: folder, lock, lock descriptor
_CLAIMS_LOCK = threading.Lock()


@functools.cache
def server_folder() -> Path:
    """This process's upload folder, created (and dead servers' folders deleted) on first use;
    deleted by :func:`remove_server_folder` when the server stops (by a signal too: attnviz_app/frame.py)
    or the process exits normally, by the next server start otherwise."""
    own_folder(UPLOAD_ROOT, "TMPDIR")
    forget_dead_servers()
    folder = UPLOAD_ROOT / f"{SERVER_PREFIX}{os.getpid()}"
    lock = _server_lock(folder)
    fd = hold_lock(lock)
    shutil.rmtree(folder, ignore_errors=True)  # left by a dead process that had this pid
    folder.mkdir(parents=True)
    with _CLAIMS_LOCK:
        _claims.append((folder, lock, fd))
    return folder


def remove_server_folder() -> list[Path]:
    """Delete the upload folders this process made, and their locks; returns them. Safe to call
    twice and from a signal handler; a later :func:`server_folder` makes a new folder."""
    with _CLAIMS_LOCK:
        claims = _claims[:]
        _claims.clear()
    server_folder.cache_clear()
    for folder, lock, fd in claims:
        shutil.rmtree(folder, ignore_errors=True)
        release_lock(lock, fd)
    return [folder for folder, _, _ in claims]


atexit.register(remove_server_folder)
