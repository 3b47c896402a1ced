"""Checkpoints uploaded in the browser: checked as the CLI checks a checkpoint, private to the
session that uploaded them, freed when it ends, saved into the models folder on request.

- An upload is written under a temporary folder with the user's file name and loaded with
  :func:`attnviz.store.load_checkpoint`: the safetensors header and its size, the attnviz header's
  fields, every weight's dtype and shape, finite weights. A refused file is deleted at once and the
  error names the file and what is wrong; nothing else is touched.
- A file that passes is kept in the server's upload folder under its content hash and held in
  :data:`attnviz.server.upload_ledger.LEDGER` for its session, so it is deleted when the session ends
  (or removes it); the model loaded to check it is kept here and dropped with the file.
- Only the uploading session lists it (:func:`session_checkpoints`) and gets its model
  (:func:`uploaded_model`); another session that knows its path gets nothing.
- :func:`save_checkpoint` copies it into the models folder under a reserved name (the same
  reservation trainings take; a taken or shipped name becomes ``name-2``, ...); nothing there is
  ever overwritten. The saved model is then everyone's, like any model of that folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from attnviz.decoding import Translator
from attnviz.errors import CheckpointError, ConfigError
from attnviz.server import upload_folder
from attnviz.server.upload_folder import server_folder
from attnviz.server.upload_ledger import ON_DELETE, hold_upload, release_upload
from attnviz.store import (
    SUFFIX,
    ModelEntry,
    load_checkpoint,
    models_dir,
    move_no_clobber,
    name_lock,
    read_header,
    release_lock,
    reserve_name,
    slugify,
)

MAX_CHECKPOINT_UPLOAD_MB = 50  # the app's server.maxUploadSize; shipped checkpoints are under 8 MB
MAX_CHECKPOINTS_PER_SESSION = 4  # each one's model stays in memory while its session lives
FOLDER = "checkpoints"  # inside the server's upload folder


@dataclass(frozen=True)
class UploadedCheckpoint:
    """One session's uploaded checkpoint: its catalog entry, the name of the file it came from, and
    the ``alive()`` test of its session (the ledger's)."""

    entry: ModelEntry
    file_name: str
    alive: Callable[[], bool]

    @property
    def path(self) -> Path:
        return Path(self.entry.path)

    def live(self) -> bool:
        return self.path.is_file() and self.alive()


class CheckpointUploads:
    """Which session uploaded which checkpoint, and the model loaded from each file. Thread-safe.
    A record whose session ended or whose file is gone is dropped when seen."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[str, dict[Path, UploadedCheckpoint]] = {}
        self._models: dict[Path, Translator] = {}

    def add(self, session: str, item: UploadedCheckpoint, model: Translator) -> None:
        with self._lock:
            for other in list(self._sessions):
                self._live(other)  # ended sessions' records go
            self._sessions.setdefault(session, {})[item.path] = item
            self._models.setdefault(item.path, model)

    def _live(self, session: str) -> dict[Path, UploadedCheckpoint]:
        held = {path: item for path, item in self._sessions.get(session, {}).items() if item.live()}
        if held:
            self._sessions[session] = held
        else:
            self._sessions.pop(session, None)
        return held

    def of(self, session: str) -> list[UploadedCheckpoint]:
        with self._lock:
            return list(self._live(session).values())

    def owned(self, session: str, path: Path) -> UploadedCheckpoint | None:
        with self._lock:
            return self._live(session).get(Path(path))

    def model(self, session: str, path: Path) -> Translator | None:
        with self._lock:
            return self._models.get(Path(path)) if Path(path) in self._live(session) else None

    def drop(self, session: str, path: Path) -> None:
        with self._lock:
            self._sessions.get(session, {}).pop(Path(path), None)

    def forget(self, path: Path) -> None:
        """The file is deleted (its last session ended or removed it): drop its model and records."""
        with self._lock:
            self._models.pop(path, None)
            for held in self._sessions.values():
                held.pop(path, None)
            for session in [s for s, held in self._sessions.items() if not held]:
                del self._sessions[session]


UPLOADS = CheckpointUploads()
ON_DELETE.append(UPLOADS.forget)  # the file went (its session ended): its model goes too


def checkpoint_folder() -> Path:
    """Where this server keeps uploaded checkpoints (inside its upload folder); a model root for loading."""
    return server_folder() / FOLDER


def is_uploaded_checkpoint(path: str | Path) -> bool:
    """Whether ``path`` names an uploaded checkpoint of some server (whoever uploaded it); nothing is created."""
    folder = Path(path).parent
    return folder.name == FOLDER and folder.parent.parent == upload_folder.UPLOAD_ROOT


def _stem(file_name: str) -> str:
    try:
        return slugify(Path(file_name).stem)
    except ConfigError:
        return "checkpoint"


def _free_name(stem: str, taken: set[str]) -> str:
    if stem not in taken:
        return stem
    for k in range(1, 1000):
        candidate = f"{stem}-uploaded" if k == 1 else f"{stem}-uploaded-{k}"
        if candidate not in taken:
            return candidate
    raise ConfigError(f"too many models named {stem!r}; rename the file")


# the rest of a path after a folder: "/" or "\\", then anything up to a space, quote, bracket,
# comma or semicolon, a sentence's full stop left out; it must end there (not "/tmpfoo" for "/tmp")
_REST_OF_PATH = r"""(?:[/\\](?:[^\s'"),;]*[^\s'"),;.])?)?(?![^\s'"),;:.])"""


def without_server_paths(text: str) -> str:
    """``text`` for a browser: every path inside this server's upload, models or temporary folder
    (a file in it included) replaced by the folder's description."""
    folders = {
        upload_folder.UPLOAD_ROOT: "the server's upload folder",
        models_dir(): "the models folder",
        Path(tempfile.gettempdir()): "the server's temporary folder",
    }
    for folder, said in sorted(folders.items(), key=lambda item: -len(str(item[0]))):  # the deepest first
        text = re.sub(re.escape(str(folder)) + _REST_OF_PATH, said, text)
    return text


def _checked(data: bytes, file_name: str) -> tuple[Path, Translator]:
    """Write ``data`` as ``file_name`` in a temporary folder and load it as the CLI does; the
    checked file's path and its model. A refused file is deleted and its error raised, naming no
    server path (the upload folder's file system failing too)."""
    suffix = Path(file_name).suffix.lower()
    shown = f"{_stem(file_name)}{suffix if suffix.isascii() and len(suffix) <= 12 else ''}"
    if len(data) > MAX_CHECKPOINT_UPLOAD_MB * 2**20:
        raise CheckpointError(
            f"{shown}: {len(data) / 2**20:.0f} MiB; uploaded checkpoints may hold at most "
            f"{MAX_CHECKPOINT_UPLOAD_MB} MiB (copy a bigger one into the models folder instead)"
        )
    folder = None
    try:
        checkpoint_folder().mkdir(exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix=".checking-", dir=checkpoint_folder()))
        path = folder / shown
        path.write_bytes(data)
        model = load_checkpoint(path)  # a pickle is refused by its name or its first bytes
        final = checkpoint_folder() / f"{hashlib.sha256(data).hexdigest()[:20]}{SUFFIX}"
        if not final.is_file():
            os.replace(path, final)
        return final, model
    except CheckpointError as e:
        raise CheckpointError(without_server_paths(str(e))) from e
    except OSError as e:
        raise CheckpointError(
            f"{shown}: the server could not store the upload ({e.strerror or type(e).__name__}); try again later"
        ) from e
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def store_checkpoint(
    data: bytes, file_name: str, session: str, alive: Callable[[], bool], taken: set[str] = frozenset()
) -> ModelEntry:
    """Check an uploaded checkpoint and keep it for ``session`` until it ends (``alive()`` is
    False) or removes it; return its catalog entry (``source`` "uploaded", named after the file,
    ``-uploaded`` added when a name in ``taken`` or another upload of the session has it).
    Raises :class:`CheckpointError` (a refused file) or :class:`ConfigError` (too many)."""
    mine = UPLOADS.of(session)
    if len(mine) >= MAX_CHECKPOINTS_PER_SESSION:
        raise ConfigError(
            f"this session holds {len(mine)} uploaded checkpoints, the most it may; remove one before uploading another"
        )
    path, model = _checked(data, file_name)
    same = UPLOADS.owned(session, path)
    if same is not None:
        return same.entry  # the same bytes again
    hold_upload(path, session, alive)
    name = _free_name(_stem(file_name), set(taken) | {item.entry.name for item in mine})
    entry = ModelEntry.from_upload(name, path, read_header(path), session)
    UPLOADS.add(session, UploadedCheckpoint(entry, file_name, alive), model)
    return entry


def session_checkpoints(session: str) -> list[ModelEntry]:
    """The catalog entries of ``session``'s uploaded checkpoints, oldest first."""
    return [item.entry for item in UPLOADS.of(session)]


def uploaded_model(session: str, path: str | Path) -> Translator | None:
    """The model of ``session``'s uploaded checkpoint at ``path``; None when the file is not one
    (another session's upload included)."""
    return UPLOADS.model(session, Path(path))


def remove_checkpoint(session: str, path: str | Path) -> None:
    """``session`` no longer uses its uploaded checkpoint; the file goes when no session holds it."""
    UPLOADS.drop(session, Path(path))
    release_upload(Path(path), session)


def save_checkpoint(session: str, path: str | Path, name: str, folder: Path | None = None) -> Path:
    """Copy ``session``'s uploaded checkpoint into the models folder as ``name`` (slugified), or
    ``name-2`` ... when the name is taken, shipped or being trained; never overwrites. The upload
    is then released (the saved model replaces it in the session's list). Returns the saved path."""
    item = UPLOADS.owned(session, Path(path))
    if item is None or not item.path.is_file():
        raise ConfigError("this uploaded checkpoint is gone (its session ended or removed it); upload it again")
    folder = Path(folder) if folder is not None else models_dir()
    try:
        out, fd = reserve_name(folder, slugify(name))
    except OSError as e:
        raise ConfigError(
            f"cannot save into {folder} ({e.strerror or e}); make the folder writable or set ATTNVIZ_MODELS"
        ) from e
    temp = folder / f".{out.name}.{os.getpid()}.{threading.get_ident()}.tmp"  # cleaned if a kill leaves it
    try:
        shutil.copyfile(item.path, temp)
        with open(temp, "rb") as f:
            os.fsync(f.fileno())
        saved = move_no_clobber(temp, folder, out.stem)
    except OSError as e:
        raise ConfigError(f"cannot save into {folder} ({e.strerror or e}); free some space or make it writable") from e
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        release_lock(name_lock(folder, out.stem), fd)
    remove_checkpoint(session, item.path)
    return saved
