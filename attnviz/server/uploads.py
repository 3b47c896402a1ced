"""Uploaded files on the server: where they live, how much of them is kept, who uses them, when
they are deleted. No Streamlit here: the app tells this module about its sessions through
:func:`use_web_sessions` (attnviz_app/app_pages/shared/uploads.py).

- Each server process keeps its uploads in its own folder, ``UPLOAD_ROOT/server-PID``, claimed
  with a lock that dies with the process. A starting server deletes the folders of servers that
  are gone (stopped or killed): an upload nothing alive uses does not outlive its server.
- An upload is stored under its content hash, with at most ``MAX_UPLOAD_ROWS`` rows and
  ``MAX_UPLOAD_MB`` megabytes: a bigger table keeps its first rows (:func:`head_rows`), and the
  page says so.
- The :data:`LEDGER` records which holders use which file: browser sessions (the one that
  uploaded it, another that uploaded the same bytes) and trainings reading it. A file is deleted
  when its last holder is gone: a session that replaced it by another upload, a session that
  ended, a training that finished.
- A session ends some time after its tab closes: the web server keeps a disconnected session for
  :func:`reconnect_window` seconds in case it reconnects. The app reports a disconnect with
  :func:`session_disconnected`; a janitor thread then waits that long, checks that the session
  did not come back, drops its holds and has the web server free its own copy of the session's
  uploaded bytes (:attr:`WebSessions.free`).
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import itertools
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from attnviz.server.table_head import head_rows
from attnviz.store import hold_lock, is_locked, release_lock, upload_root

log = logging.getLogger(__name__)

UPLOAD_ROOT = upload_root()
SERVER_PREFIX = "server-"
MAX_UPLOAD_ROWS = 100_000  # rows kept of an upload: the Train form takes at most 50,000 training pairs
MAX_UPLOAD_MB = 10  # and megabytes kept: memory grows with the words, many times the file size
JANITOR_SECONDS = 15.0  # how often ended sessions and finished trainings are looked for
TRAINING = "training:"  # holder ids of trainings start with this; the others are session ids


# -- where uploads live ---------------------------------------------------------------------


def _server_lock(folder: Path) -> Path:
    return folder.with_name(f"{folder.name}.lock")


def forget_dead_servers() -> list[Path]:
    """Delete the upload folders of server processes that are gone, and upload files loose in
    ``UPLOAD_ROOT`` (outside any server's folder). Returns what was deleted."""
    removed = []
    for entry in UPLOAD_ROOT.iterdir() if UPLOAD_ROOT.is_dir() else []:
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
    deleted by :func:`remove_server_folder` when the server stops (by a signal too, see app.py)
    or the process exits normally, by the next server start otherwise."""
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


# -- who uses which upload ------------------------------------------------------------------


@dataclass(frozen=True)
class Stored:
    """An upload as stored: its path, and the rows it kept when it had more than the limits (else None)."""

    path: Path
    kept_rows: int | None


class Ledger:
    """Which holders use which upload files. A holder is a session id or a ``training:`` id with
    an ``alive()`` test; :meth:`collect` drops the holders that are gone and deletes every file
    that no holder is left for. Thread-safe: pages, Streamlit's event loop and the janitor call it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders: dict[Path, dict[str, Callable[[], bool]]] = {}

    def _deleted(self, paths: list[Path]) -> None:
        """Call each hook of :data:`ON_DELETE` with each deleted file (what was loaded from it is dropped)."""
        for hook, path in itertools.product(ON_DELETE, paths):
            hook(path)

    def store(self, data: bytes, name: str, holder: str, alive: Callable[[], bool]) -> Stored:
        """Write an upload (named by its content hash, never by the user's file name; its first
        ``MAX_UPLOAD_ROWS`` rows and ``MAX_UPLOAD_MB`` at most) unless it is there already, and hold
        it for ``holder``."""
        suffix = Path(name).suffix.lower()
        suffix = suffix if suffix in (".csv", ".tsv", ".jsonl", ".json", ".parquet") else ".csv"
        path = server_folder() / f"{hashlib.sha256(data).hexdigest()[:20]}{suffix}"
        head = head_rows(data, suffix.lstrip("."), MAX_UPLOAD_ROWS, MAX_UPLOAD_MB * 2**20)
        with self._lock:  # a collect between the write and the hold would delete the new file
            if not path.is_file():
                path.write_bytes(data if head is None else head[0])
            self._holders.setdefault(path, {})[holder] = alive
        _start_janitor()
        return Stored(path, None if head is None else head[1])

    def hold(self, path: Path, holder: str, alive: Callable[[], bool]) -> None:
        """Hold a stored upload for one more holder (a training reading it)."""
        with self._lock:
            self._holders.setdefault(path, {})[holder] = alive
        _start_janitor()

    def release(self, path: Path, holder: str) -> bool:
        """``holder`` no longer uses ``path``; returns whether the file was deleted (no one else holds it)."""
        with self._lock:
            holders = self._holders.get(path, {})
            holders.pop(holder, None)
            if holders:
                return False
            self._holders.pop(path, None)
            path.unlink(missing_ok=True)
        self._deleted([path])
        return True

    def collect(self) -> list[Path]:
        """Drop the holders that are gone and delete the files none is left for (returned)."""
        with self._lock:
            everyone = {h: alive for held in self._holders.values() for h, alive in held.items()}
        gone = set()
        for holder, alive in everyone.items():
            try:
                if not alive():
                    gone.add(holder)
            except Exception:  # a broken test keeps the file: deleting data in use is worse
                log.exception("upload holder %s could not be checked", holder)
        deleted = []
        with self._lock:
            for path, held in list(self._holders.items()):
                for holder in gone & set(held):
                    del held[holder]
                if not held:
                    del self._holders[path]
                    path.unlink(missing_ok=True)
                    deleted.append(path)
        self._deleted(deleted)
        return deleted


LEDGER = Ledger()
ON_DELETE: list[Callable[[Path], None]] = []  # called with every file a ledger deletes; a hook must not raise


def store_upload(data: bytes, name: str, holder: str, alive: Callable[[], bool]) -> Stored:
    """Store an upload for ``holder`` (see :meth:`Ledger.store`)."""
    return LEDGER.store(data, name, holder, alive)


def hold_upload(path: Path, holder: str, alive: Callable[[], bool]) -> None:
    """Hold a stored upload for ``holder`` too (see :meth:`Ledger.hold`)."""
    LEDGER.hold(path, holder, alive)


def release_upload(path: Path, holder: str) -> bool:
    """``holder`` no longer uses ``path``; returns whether the file was deleted (see :meth:`Ledger.release`)."""
    return LEDGER.release(path, holder)


def hold_for_training(spec: str, training: str, running: Callable[[], bool]) -> None:
    """Keep the upload a training reads (a data spec ``PATH?src=..``) until ``running()`` is False,
    whatever its session does meanwhile; a spec that is no upload of this server is ignored."""
    path = Path(spec.partition("?")[0])
    if path.parent == server_folder() and path.is_file():
        LEDGER.hold(path, f"{TRAINING}{training}", running)


# -- when a session ends --------------------------------------------------------------------


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
_WAKE = threading.Event()
_JANITOR_LOCK = threading.Lock()
_janitor: threading.Thread | None = None


def session_seen(session: str) -> Callable[[], bool]:
    """``session`` ran a script: it is alive. Returns the ``alive()`` test of its holds."""
    SESSIONS.seen(session)
    return lambda: not SESSIONS.ended(session)


def session_disconnected(session: str) -> None:
    """The web server saw ``session`` disconnect (or shut down). Only takes note and wakes the
    janitor: it may run on the server's event loop."""
    SESSIONS.disconnected(session)
    _WAKE.set()


def collect() -> list[Path]:
    """Delete the uploads whose holders are all gone; free what the web server keeps of ended sessions."""
    deleted = LEDGER.collect()
    for session in SESSIONS.expire():
        _web.free(session)
    return deleted


def _janitor_loop() -> None:
    while True:
        _WAKE.wait(timeout=max(0.1, min(JANITOR_SECONDS, SESSIONS.next_end() - time.monotonic())))
        _WAKE.clear()
        try:
            collect()
        except Exception:  # the janitor must outlive one bad file
            log.exception("collecting uploads failed")


def _start_janitor() -> None:
    global _janitor
    with _JANITOR_LOCK:
        if _janitor is None:
            _janitor = threading.Thread(target=_janitor_loop, name="attnviz-uploads-janitor", daemon=True)
            _janitor.start()
