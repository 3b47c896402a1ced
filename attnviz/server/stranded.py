"""Trainings a killed server left behind: their last saved epoch sits in the models folder's
staging folder (``.training/``), hidden from Explore. List them, keep one as a model, resume
it as a new job from its last epoch, or discard it.

A staging checkpoint whose name lock (see :mod:`attnviz.store.files`) no live process holds is
stranded; a running training holds its lock, so it is never listed here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from attnviz.errors import AttnvizError, CheckpointError, ConfigError
from attnviz.store import (
    STAGING,
    SUFFIX,
    hold_lock,
    is_locked,
    models_dir,
    move_no_clobber,
    name_lock,
    read_header,
    release_lock,
    slugify,
    visible_to,
)
from attnviz.training import Recipe, drop_state, move_state


@dataclass
class StrandedRun:
    """One interrupted training in the staging folder."""

    name: str  # its reserved model name (the file stem)
    path: Path  # the staging checkpoint
    epochs_done: int
    epochs: int | None  # planned, from the recipe
    recipe: Recipe | None  # None when the stored recipe no longer validates
    owner: str | None  # the session that trained it on an upload, else None
    modified: float  # mtime of the last save
    finished: bool  # training ended (killed while evaluating or moving): keep it, nothing to resume


def _staging(folder: Path | None) -> Path:
    return (Path(folder) if folder is not None else models_dir()) / STAGING


def stranded_runs(folder: Path | None = None, viewer: str | None = None) -> list[StrandedRun]:
    """The stranded runs of a models folder, newest first. With ``viewer`` (a session id), runs
    another session trained on an upload are left out; ``viewer=None`` lists all of them."""
    staging = _staging(folder)
    runs = []
    for path in staging.glob(f"*{SUFFIX}") if staging.is_dir() else []:
        if is_locked(name_lock(staging.parent, path.stem)):
            continue  # a live training
        try:
            meta = read_header(path).get("meta") or {}
            modified = path.stat().st_mtime
        except (CheckpointError, OSError):
            continue  # a save killed before its first epoch ended leaves no checkpoint, so this is rare
        if viewer is not None and not visible_to(meta, viewer):
            continue
        progress = meta.get("progress") or {}
        try:
            recipe = Recipe.from_dict(meta["recipe_full"])
        except (KeyError, TypeError, AttnvizError):
            recipe = None
        runs.append(
            StrandedRun(
                path.stem,
                path,
                int(progress.get("epoch") or len(meta.get("history") or [])),
                (recipe.train.get("epochs") if recipe else None),
                recipe,
                meta.get("owner"),
                modified,
                not progress,
            )
        )
    return sorted(runs, key=lambda r: r.modified, reverse=True)


def _find(name: str, folder: Path | None) -> StrandedRun:
    for run in stranded_runs(folder):
        if run.name == name:
            return run
    raise ConfigError(f"no unfinished training named {name!r}; it was kept, resumed or discarded already")


@contextlib.contextmanager
def _holding(run: StrandedRun) -> Iterator[None]:
    lock = run.path.parent / f"{run.name}.lock"
    fd = hold_lock(lock)
    if fd is None or not run.path.is_file():
        release_lock(lock, fd, remove=False)
        raise ConfigError(f"the unfinished training {run.name!r} is being resumed, kept or discarded elsewhere")
    try:
        yield
    finally:
        release_lock(lock, fd)


def keep_stranded(name: str, folder: Path | None = None) -> Path:
    """Move a stranded run into the models folder as a model (its name, or ``name-2`` ... if
    taken); it holds the weights of its last finished epoch. Returns the model's path."""
    run = _find(name, folder)
    with _holding(run):
        stem = slugify(run.recipe.name) if run.recipe else run.name
        kept = move_no_clobber(run.path, run.path.parent.parent, stem)
        move_state(run.path, kept)  # kept as a model, still resumable as the same run (train --resume)
        return kept


def resume_stranded(name: str, folder: Path | None = None) -> Recipe:
    """The recipe to continue a stranded run from its last epoch: submit it with
    ``jobs.REGISTRY.submit(session_id, recipe, folder, resume=name)``."""
    run = _find(name, folder)
    if run.finished:
        raise ConfigError(f"{name!r} finished training before the server stopped; keep it instead of resuming it")
    if run.recipe is None:
        raise ConfigError(f"{name!r} carries a recipe this attnviz cannot read; keep it or discard it")
    return run.recipe


def discard_stranded(name: str, folder: Path | None = None) -> None:
    """Delete a stranded run's checkpoint."""
    run = _find(name, folder)
    with _holding(run):
        run.path.unlink(missing_ok=True)
        drop_state(run.path)
