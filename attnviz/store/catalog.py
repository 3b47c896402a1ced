"""Where models live: shipped ones in ``pretrained/`` (with a manifest), trained ones in a
models folder. ``load`` takes a model name or a path.

A broken entry of the models folder (a dangling symlink, an unreadable file) is skipped with
a :class:`ModelWarning`, never fatal. A model trained on a user's upload carries its owner's
session id (``meta["owner"]``): its vocabulary and example sentence reveal the upload's words, so
other sessions neither list it nor load it (:func:`list_models`, :func:`visible_to`) until its
owner shares it (:func:`attnviz.store.checkpoint.drop_owner`); the CLI (no session) lists it
without its example sentence and data path.
"""

from __future__ import annotations

import difflib
import json
import os
import warnings
from collections.abc import Callable
from pathlib import Path

from attnviz.decoding import Translator
from attnviz.devices import pick_device
from attnviz.errors import CheckpointError, InputError, refuse_url
from attnviz.model import check_scores_known
from attnviz.store.checkpoint import load_checkpoint, read_header
from attnviz.store.checkpoint import read_history as read_file_history
from attnviz.store.entry import ModelEntry, visible_to
from attnviz.store.paths import (
    SUFFIX,
    ModelWarning,
    absent_models,
    manifest_path,
    models_dir,
    pretrained_dir,
    read_manifest,
)


def model_roots(include_cwd: bool = False) -> list[Path]:
    """The folders checkpoints may be read from: the shipped models, the models folder and, for
    the CLI (a user's own shell), the working directory. The app passes these as ``roots``."""
    roots = [pretrained_dir(), models_dir()]
    return [*roots, Path.cwd().resolve()] if include_cwd else roots


def write_manifest(folder: Path | None = None, check: Callable[[str], dict] | None = None) -> list[dict]:
    """Rebuild ``manifest.json`` from the checkpoints' own headers (the single source of truth).

    ``check(file) -> dict``, when given, adds each model's small-sample metrics under "check".
    """
    folder = pretrained_dir() if folder is None else folder
    entries = []
    # by name, so a variant (NAME-guided) follows its base model, which is then its slot's default
    for path in sorted(folder.glob(f"*{SUFFIX}"), key=lambda p: p.stem):
        header = read_header(path)
        meta, cfg = header["meta"], header["config"]
        entries.append(
            {
                "name": path.stem,
                "file": path.name,
                "task": meta.get("task"),
                "score": cfg["score"],
                "style": cfg["style"],
                "encoder": cfg["encoder"],
                "example": meta.get("example"),
                "metrics": meta.get("metrics", {}),
                "parameters": meta.get("parameters"),
                "train_seconds": meta.get("train_seconds"),
                "epochs": meta.get("epochs_run"),
                "precision": meta.get("precision") or "fp32",
                "hardware": meta.get("hardware"),
                "device": meta.get("device") or "cpu",  # where it trained (checkpoints before the field: CPUs)
                "recipe": f"recipes/{path.stem}.json",
                "size_bytes": path.stat().st_size,
            }
        )
        if check is not None:
            entries[-1]["check"] = check(path.name)
    tmp = folder / "manifest.json.tmp"
    tmp.write_text(json.dumps({"models": entries}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, folder / "manifest.json")
    return entries


PRIVATE_META = ("example", "recipe_full", "recipe", "probe", "data_notes", "guided", "task")


def shareable_meta(meta: dict, viewer: str | None) -> dict:
    """A model's meta as ``viewer`` may see it: unchanged for its owner (or an unowned model);
    for another session, without what names or quotes the owner's data (example sentence,
    recipe and its data path, probe, notes) and marked ``private`` so that
    :func:`attnviz.evaluation.evaluate.measured_on` refuses to look for its data."""
    if visible_to(meta, viewer):
        return meta
    return {**{k: v for k, v in meta.items() if k not in PRIVATE_META}, "private": True}


def _resolved(path: Path) -> Path | None:
    """``path`` with its links followed, or None for a link loop or an unreadable link."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: "Symlink loop" (Python 3.11/3.12)
        return None


def _trained_files(folder: Path) -> list[tuple[Path, float]]:
    """The models folder's checkpoints with their mtimes, newest first; broken entries and
    links leading out of the folder are skipped with a :class:`ModelWarning`."""
    found = []
    for path in folder.glob(f"*{SUFFIX}"):
        resolved = _resolved(path)
        if resolved is None:
            warnings.warn(f"skipped {path.name}: a symlink loop or an unreadable link", ModelWarning, stacklevel=3)
            continue
        if not resolved.is_relative_to(folder.resolve()):
            warnings.warn(f"skipped {path.name}: it links outside {folder}", ModelWarning, stacklevel=3)
            continue
        try:
            found.append((path, path.stat().st_mtime))
        except OSError as e:
            warnings.warn(f"skipped {path.name}: {e.strerror or e} (a broken link?)", ModelWarning, stacklevel=3)
    return sorted(found, key=lambda item: item[1], reverse=True)


def catalog_stamp() -> tuple:
    """What :func:`list_models` reads, as stat figures: the manifest, the two folders and every
    checkpoint of the models folder (name, modification time, size). Equal stamps list the same
    models, so a caller may keep a listing until the stamp changes (about a millisecond to take,
    where a listing reads every trained model's header)."""

    def stat(path: Path) -> tuple:
        try:
            found = path.stat()
        except OSError:
            return (str(path),)
        return str(path), found.st_mtime_ns, found.st_size

    stamp = [stat(manifest_path()), stat(pretrained_dir()), stat(models_dir())]
    try:
        with os.scandir(models_dir()) as entries:
            stamp += sorted(stat(Path(entry.path)) for entry in entries if entry.name.endswith(SUFFIX))
    except OSError:  # no models folder yet, or a file in its place: list_models says so
        pass
    return tuple(stamp)


def list_models(viewer: str | None = None) -> list[ModelEntry]:
    """Shipped models (from the manifest) then user-trained ones (newest first); unreadable
    files in the models folder are skipped with a :class:`ModelWarning`, not fatal.

    ``viewer`` is the session asking (the app passes its session id): a model another session
    trained on an upload is left out. Without a viewer (the CLI) it is listed without its
    example sentence and data path. A shipped model whose file is not there (an installed
    package's Multi30k models: :func:`attnviz.store.paths.absent_models`) is not listed."""
    folder = pretrained_dir()
    models = [ModelEntry.from_manifest(item, folder) for item in read_manifest() if (folder / item["file"]).is_file()]
    folder = models_dir()
    if folder.is_dir():
        for path, _ in _trained_files(folder):
            try:
                header = read_header(path)
                if viewer is not None and not visible_to(header["meta"], viewer):
                    continue  # another session's private model
                check_scores_known(header["config"])  # listed only where it can be opened
                models.append(ModelEntry.from_trained(path, header, viewer))
            except (CheckpointError, OSError) as e:
                warnings.warn(f"skipped {path.name}: {e}", ModelWarning, stacklevel=2)
    elif folder.exists():
        warnings.warn(
            f"the models folder {folder} is a file, not a folder, so no models of your own are listed; "
            "point ATTNVIZ_MODELS at a folder",
            ModelWarning,
            stacklevel=2,
        )
    return models


def resolve(name_or_path: str, roots: list[Path] | None = None) -> Path:
    """A model name (shipped or trained) or a checkpoint path -> the file.

    With ``roots``, the file (symlinks resolved) must lie inside one of those folders, named
    or given by path, so a user cannot make the app read arbitrary files.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)  # listing for a lookup: no noise
        models = list_models()
    for entry in models:
        if entry.name == name_or_path:
            return _confined(Path(entry.path), name_or_path, roots)
    refuse_url(name_or_path, "a model's checkpoint")
    path = _confined(_given_path(name_or_path), name_or_path, roots)
    if path.is_file():
        return path
    if any(entry["name"] == name_or_path for entry in absent_models()):
        raise CheckpointError(
            f"{name_or_path!r} is a shipped model that is not installed here (an installed package leaves the "
            "Multi30k models out); name a copy of the repository's pretrained/ folder with ATTNVIZ_PRETRAINED=DIR "
            "(`attnviz app --models DIR` for the app)"
        )
    own = models_dir() / f"{name_or_path}{SUFFIX}"
    if "/" not in name_or_path and not name_or_path.startswith(".") and own.is_file():
        header = read_header(own)  # a file the listing skipped: its own reason (corrupt, truncated, ...)
        check_scores_known(header["config"])
    names = [m.name for m in models]
    close = difflib.get_close_matches(name_or_path, names, n=4, cutoff=0.75)
    hint = (
        f"did you mean {' or '.join(close)}?"
        if close
        else f"known models: {', '.join(names[:12])}" + (" ... (all: `attnviz list`)" if len(names) > 12 else "")
    )
    raise CheckpointError(f"no model named {name_or_path!r} and no file at that path; {hint}")


def _given_path(asked: str) -> Path:
    """A model's path as typed, ``~`` expanded; a name no file system can hold (a NUL byte, an unknown
    ``~user``) is a CheckpointError."""
    if "\0" in asked:
        raise CheckpointError(f"{asked!r} holds a NUL byte; give a model's name or a checkpoint's path")
    if any(len(part.encode()) > 255 for part in asked.split("/")):  # no file system names a file so long
        raise CheckpointError(
            f"{asked[:40]!r}... is too long for a file name; give a model's name or a checkpoint's path"
        )
    try:
        return Path(asked).expanduser()
    except RuntimeError as e:  # Python 3.11: "Could not determine home directory."
        raise CheckpointError(f"{asked!r}: no home folder to expand ~ in ({e}); give the path in full") from None


def _confined(path: Path, asked: str, roots: list[Path] | None) -> Path:
    resolved = _resolved(path)
    if resolved is None:
        raise CheckpointError(f"{asked!r} is a symlink loop or an unreadable link; remove it")
    if roots is not None and not any(resolved.is_relative_to(Path(r).resolve()) for r in roots):
        raise CheckpointError(
            f"{asked!r} is outside the model folders ({', '.join(str(r) for r in roots)}); "
            "copy the checkpoint into one of them"
        )
    return path


def read_history(name_or_path: str | Path) -> dict | None:
    """The alignment history of a model, by name (as :func:`load` takes it) or checkpoint path, as plain
    data for plots (:func:`attnviz.store.checkpoint.read_history`); None for a model trained without one."""
    if not isinstance(name_or_path, str | Path):
        raise InputError(f"give a model's name or a checkpoint's path, not {type(name_or_path).__name__}")
    return read_file_history(resolve(str(name_or_path)))  # a name first, as load reads it; then a path


def load(name_or_path: str | Path, device: str | None = None, roots: list[Path] | None = None) -> Translator:
    """Load a shipped model by name (see ``python -m attnviz list``) or a checkpoint by path."""
    if not isinstance(name_or_path, str | Path):
        raise InputError(f"give a model's name or a checkpoint's path, not {type(name_or_path).__name__}")
    return load_checkpoint(resolve(str(name_or_path), roots), device=pick_device(device) if device else "cpu")
