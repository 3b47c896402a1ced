"""Who uses which uploaded file, and deleting the files no one uses.

- An upload is stored in this server's folder (:func:`attnviz.server.upload_folder.server_folder`)
  under its content hash, with at most ``MAX_UPLOAD_ROWS`` rows and ``MAX_UPLOAD_MB`` megabytes of
  text: a bigger table keeps its first rows (:func:`head_rows`; a Parquet file measured by the text it
  decodes to), and the page says so; one that cannot be measured safely is refused (a DataError). A text table in
  UTF-16 or UTF-32 (after its byte-order mark) is stored as UTF-8.
- The :data:`LEDGER` records which holders use which file: browser sessions (the one that
  uploaded it, another that uploaded the same bytes) and trainings reading it. A file is deleted
  when its last holder is gone: a session that replaced it by another upload, a session that
  ended (:mod:`attnviz.server.web_sessions`), a training that finished.
- A janitor thread, started with the first upload, collects every ``JANITOR_SECONDS`` and when a
  session disconnects.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from attnviz.data import as_utf8
from attnviz.errors import DataError
from attnviz.server.table_head import head_rows
from attnviz.server.upload_folder import server_folder
from attnviz.server.web_sessions import LEFT, end_sessions, next_end
from attnviz.store import write_atomic

log = logging.getLogger(__name__)

MAX_UPLOAD_ROWS = 100_000  # rows kept of an upload: the Train form takes at most 50,000 training pairs
MAX_UPLOAD_MB = 10  # and megabytes kept: memory grows with the words, many times the file size
JANITOR_SECONDS = 15.0  # how often ended sessions and finished trainings are looked for
TRAINING = "training:"  # holder ids of trainings start with this; the others are session ids


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
        ``MAX_UPLOAD_ROWS`` rows and ``MAX_UPLOAD_MB`` of text at most) unless it is there already, and
        hold it for ``holder``. Raises :class:`DataError` as :func:`head_rows` does."""
        suffix = Path(name).suffix.lower()
        suffix = suffix if suffix in (".csv", ".tsv", ".jsonl", ".json", ".parquet") else ".csv"
        if suffix != ".parquet":
            data = as_utf8(data)  # a UTF-16 table (Excel's "Unicode Text") is stored as UTF-8
        path = server_folder() / f"{hashlib.sha256(data).hexdigest()[:20]}{suffix}"
        head = head_rows(data, suffix.lstrip("."), MAX_UPLOAD_ROWS, MAX_UPLOAD_MB * 2**20)
        with self._lock:  # a collect between the write and the hold would delete the new file
            if not path.is_file():  # renamed into place whole: a full disk never leaves half a table under its hash
                try:
                    write_atomic(path, data if head is None else head[0])
                except OSError as e:
                    raise DataError(
                        f"the server could not store the upload ({e.strerror or type(e).__name__}); "
                        "its disk may be full: try again later, or ask whoever runs it"
                    ) from None
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


def collect() -> list[Path]:
    """Delete the uploads whose holders are all gone; free what the web server keeps of ended sessions."""
    deleted = LEDGER.collect()
    end_sessions()
    return deleted


_JANITOR_LOCK = threading.Lock()
_janitor: threading.Thread | None = None


def _janitor_loop() -> None:
    while True:
        LEFT.wait(timeout=max(0.1, min(JANITOR_SECONDS, next_end() - time.monotonic())))
        LEFT.clear()
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
