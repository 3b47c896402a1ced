"""Background training jobs: one thread per job, a global cap, stop and abandonment.

The app's Train page submits a :class:`~attnviz.training.recipes.Recipe` to the module-level
:data:`REGISTRY`; the job runs :func:`~attnviz.training.recipes.run_recipe` in a daemon thread that calls
no Streamlit API and writes its progress into the job (under a lock). The page reads a
:meth:`TrainingJob.snapshot`. A job occupies one of ``ATTNVIZ_MAX_TRAININGS`` slots (default 1)
while it is queued or running; it frees the slot when it finishes, fails or stops. A job whose
page stopped polling (closed tab) stops itself after ``abandon_after`` seconds, or at once when
its ``is_alive`` callback says the session is gone.

The model is trained into a hidden staging folder and moved into :func:`models_dir`
only when it is complete, so Explore never lists a half-trained model. Its name is reserved
when the job is submitted (:func:`attnviz.store.files.reserve_name`), so two trainings named ``same`` end
as ``same`` and ``same-2``. A run that a killed server left in the staging folder is listed,
kept, resumed or discarded through :mod:`attnviz.server.stranded`.

A model trained on a file (an upload) records its session as ``meta["owner"]``; other sessions
neither list nor load it (``list_models(viewer=...)``) until its owner shares it
(:func:`attnviz.store.drop_owner`).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from attnviz.data import is_file_spec
from attnviz.decoding import Alignment, Translator
from attnviz.errors import AttnvizError, ConfigError, counted
from attnviz.store import (
    STAGING,
    SUFFIX,
    hold_lock,
    models_dir,
    move_no_clobber,
    name_lock,
    release_lock,
    reserve_name,
    slugify,
)
from attnviz.training import Progress, Recipe, drop_state, move_state, run_recipe

log = logging.getLogger(__name__)

QUEUED, RUNNING, DONE, FAILED, STOPPED = "queued", "running", "done", "failed", "stopped"
ACTIVE = (QUEUED, RUNNING)
MAX_STEP_ROWS = 2000  # older step rows are thinned beyond this, so a long run stays cheap to draw


class BusyError(AttnvizError):
    """The server already runs as many trainings as it allows, or this session runs one."""


__all__ = ["STAGING", "BusyError", "JobRegistry", "JobSnapshot", "TrainingJob"]


def max_trainings() -> int:
    """The global cap: ``$ATTNVIZ_MAX_TRAININGS`` (default 1), at least 1."""
    raw = os.environ.get("ATTNVIZ_MAX_TRAININGS", "1")
    try:
        return max(1, int(raw))
    except ValueError:
        raise ConfigError(f"ATTNVIZ_MAX_TRAININGS must be a whole number, got {raw!r}") from None


@dataclass
class JobSnapshot:
    """A consistent copy of a job's state for drawing (lists are copies)."""

    name: str
    status: str
    steps: list[dict]
    epochs: list[dict]
    probe: Alignment | None
    latest: dict | None
    error: str | None
    result_path: Path | None
    seconds: float
    history: dict | None = None  # the alignment history so far, as plain data (attnviz.training.history)
    ending: str | None = None  # a finished training's early stop and kept epoch (meta["ending"])

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    @property
    def fraction(self) -> float:
        """Share of the planned optimiser steps done, in [0, 1]."""
        if self.status == DONE:
            return 1.0
        if not self.latest or not self.latest["total_steps"]:
            return 0.0
        return min(1.0, self.latest["step"] / self.latest["total_steps"])


@dataclass
class TrainingJob:
    """One training run in its own daemon thread. Create through :meth:`JobRegistry.submit`."""

    recipe: Recipe
    out: Path  # the reserved final path; the lock on its name is ``lock_fd``
    session_id: str
    abandon_after: float = 1800.0
    is_alive: Callable[[], bool] | None = None
    lock_fd: int | None = None
    resume: bool = False  # continue the stranded run in the staging folder
    owner: str | None = None  # recorded as meta["owner"]
    status: str = QUEUED
    error: str | None = None
    result_path: Path | None = None
    steps: list[dict] = field(default_factory=list)
    epochs: list[dict] = field(default_factory=list)
    probe: Alignment | None = None
    history: dict | None = None
    ending: str | None = None
    latest: dict | None = None
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    last_poll: float = field(default_factory=time.monotonic)
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _abandoned: bool = field(default=False, repr=False)  # stopped because its page went away
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"attnviz-train-{self.out.stem}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Ask the job to stop after the current step (the model so far is kept if an epoch ended)."""
        self._stop.set()

    def touch(self) -> None:
        """Record that the page is still watching (see ``abandon_after``)."""
        self.last_poll = time.monotonic()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def abandoned(self) -> bool:
        if time.monotonic() - self.last_poll > self.abandon_after:
            return True
        try:
            return self.is_alive is not None and not self.is_alive()
        except Exception:  # a broken liveness probe must not kill training
            return False

    def leaving(self) -> bool:
        """Whether it still runs but its page went away: it is stopping, to wait as an unfinished training."""
        return self.status in ACTIVE and (self._abandoned or (not self._stop.is_set() and self.abandoned()))

    def should_stop(self) -> bool:
        if not self._stop.is_set() and self.abandoned():
            log.info("training %s abandoned by its session; stopping it", self.out.stem)
            self._abandoned = True
            self._stop.set()
        return self._stop.is_set()

    def snapshot(self) -> JobSnapshot:
        """The state now; also counts as a poll."""
        self.touch()
        with self._lock:
            end = self.finished if self.finished is not None else time.monotonic()
            return JobSnapshot(
                self.recipe.name,
                self.status,
                list(self.steps),
                list(self.epochs),
                self.probe,
                dict(self.latest) if self.latest else None,
                self.error,
                self.result_path,
                end - self.started,
                self.history,
                self.ending,
            )

    def _report(self, progress: Progress) -> None:
        row = progress.as_row()
        with self._lock:
            self.latest = row
            if progress.history is not None:  # a new plain-data copy each time: snapshots may share it
                self.history = progress.history
            if progress.kind == "epoch":
                self.epochs.append(row)
                self.probe = progress.probe or self.probe
            else:
                self.steps.append(row)
                if len(self.steps) > MAX_STEP_ROWS:
                    self.steps = self.steps[::2]

    def _kept(self, trained: Translator) -> str:
        """What a stopped training kept: its finished epochs; one it was inside when stopped does not count."""
        kept, of = int(trained.meta.get("epochs_run") or 0), self.recipe.train.get("epochs", "?")
        stopped_in = int((self.latest or {}).get("epoch") or kept)
        best = f"the model is the best of the {counted(kept, 'epoch')} it finished"
        if stopped_in > kept:
            return f"It stopped inside epoch {stopped_in} of {of}, which does not count: {best}."
        return f"It stopped after epoch {kept} of {of}: {best}."

    def _finish(
        self, status: str, error: str | None = None, path: Path | None = None, ending: str | None = None
    ) -> None:
        with self._lock:  # one change a snapshot sees whole: DONE with its ending, never one without the other
            self.status, self.error, self.result_path, self.ending = status, error, path, ending
            self.finished = time.monotonic()

    @property
    def staging(self) -> Path:
        return self.out.parent / STAGING / self.out.name

    @property
    def lock_path(self) -> Path:
        return name_lock(self.out.parent, self.out.stem)

    def _run(self) -> None:
        with self._lock:
            self.status = RUNNING
        staging, keep_staging = self.staging, self.resume
        meta = {"owner": self.owner} if self.owner else None
        try:
            trained = run_recipe(self.recipe, staging, self._report, self.should_stop, resume=self.resume, meta=meta)
            with self._lock:  # as saved: a stop inside an epoch kept the last finished one and its history
                self.history = trained.history.to_dict() if trained.history is not None else None
            if self._stop.is_set() and not self.epochs and not self.resume:
                self._finish(STOPPED, "stopped before the first epoch ended; nothing was saved")
                return
            if self._abandoned:  # nobody saw it stop: the Train page offers it as an unfinished training
                keep_staging = True
                self._finish(STOPPED, "its page went away; its last epoch waits on the Train page, to keep or resume")
                return
            path = move_no_clobber(staging, self.out.parent, self.out.stem)
            move_state(staging, path)  # a stopped model's resume state goes with it (train --resume)
            if self._stop.is_set():
                self._finish(STOPPED, self._kept(trained), path=path)
            else:
                self._finish(DONE, path=path, ending=trained.meta.get("ending"))
        except AttnvizError as e:
            self._finish(FAILED, str(e))
        except Exception as e:  # a bug: keep the server alive, show a short message, log the rest
            log.exception("training %s failed", self.out.stem)
            self._finish(FAILED, f"training failed unexpectedly ({type(e).__name__}: {e})")
        finally:
            if not keep_staging:  # a resumed run that fails stays stranded, to be tried again or kept
                staging.unlink(missing_ok=True)
                drop_state(staging)  # and what a resume of it would have needed
            release_lock(self.lock_path, self.lock_fd)


class JobRegistry:
    """All training jobs of this process: at most one per session, at most ``max_jobs`` at once."""

    def __init__(self, max_jobs: int | None = None, abandon_after: float = 1800.0):
        self._max_jobs = max_jobs
        self.abandon_after = abandon_after
        self._jobs: dict[str, TrainingJob] = {}
        self._lock = threading.Lock()

    @property
    def max_jobs(self) -> int:
        return self._max_jobs if self._max_jobs is not None else max_trainings()

    def active(self) -> list[TrainingJob]:
        with self._lock:
            return [job for job in self._jobs.values() if job.status in ACTIVE]

    def running(self) -> int:
        """The trainings that count against :attr:`max_jobs`: active and not stopping."""
        with self._lock:
            return self._running()

    def _running(self) -> int:
        # one whose page went away (a reload) is told to stop now and frees its slot at once
        return sum(job.status in ACTIVE and not job.should_stop() for job in self._jobs.values())

    def get(self, session_id: str) -> TrainingJob | None:
        with self._lock:
            self._prune()
            return self._jobs.get(session_id)

    def _prune(self) -> None:
        """Drop finished jobs whose session has ended (a closed tab, a reload): no page will show them again,
        and a server that runs for a term would otherwise keep every one. Called with the lock held."""
        for sid, job in list(self._jobs.items()):
            if job.status not in ACTIVE and job.is_alive is not None and job.abandoned():
                del self._jobs[sid]

    def submit(
        self,
        session_id: str,
        recipe: Recipe,
        folder: Path | None = None,
        is_alive: Callable[[], bool] | None = None,
        resume: str | None = None,
        private: bool | None = None,
    ) -> TrainingJob:
        """Start training ``recipe`` for a session, or raise :class:`BusyError` when full.

        The model's name is reserved now (``name``, else ``name-2``, ...). ``resume`` names a
        stranded run (see :func:`attnviz.server.stranded.stranded_runs`) to continue from its last
        epoch; pass the recipe :func:`attnviz.server.stranded.resume_stranded` returned. ``private``
        (default: when the data is a file, i.e. an upload) records ``session_id`` as the
        model's owner, so other sessions neither list nor load it until it is shared.
        """
        folder = Path(folder) if folder is not None else models_dir()
        stem = slugify(recipe.name)
        if resume is None:
            # an app training keeps full precision, whatever the recipe it was copied from stores
            recipe = replace(recipe, name=stem, store="fp32", train={"num_threads": 1, **recipe.train})
            recipe = Recipe(**recipe.to_dict())  # re-validate
        private = is_file_spec(recipe.data) if private is None else private
        with self._lock:
            self._prune()
            own = self._jobs.get(session_id)
            if own is not None and own.status in ACTIVE:
                raise BusyError(f"this session already trains {own.recipe.name!r}; stop it or wait for it to finish")
            running = self._running()
            if running >= self.max_jobs:
                raise BusyError(
                    f"the server already runs {running} training(s), its limit (ATTNVIZ_MAX_TRAININGS="
                    f"{self.max_jobs}); try again when one finishes"
                )
            try:  # a read-only or missing models folder: the page's error, not a crash
                if resume is None:
                    out, fd = reserve_name(folder, stem)
                else:
                    out = folder / f"{resume}{SUFFIX}"
                    fd = hold_lock(name_lock(folder, resume))
            except OSError as e:
                raise ConfigError(
                    f"cannot reserve a model name in {folder} ({e.strerror or e}); make the folder writable "
                    "or set ATTNVIZ_MODELS to a writable one"
                ) from e
            if resume is not None and (fd is None or not (folder / STAGING / out.name).is_file()):
                release_lock(name_lock(folder, resume), fd, remove=False)
                raise BusyError(f"the unfinished run {resume!r} is being resumed, kept or discarded elsewhere")
            job = TrainingJob(
                recipe,
                out,
                session_id,
                self.abandon_after,
                is_alive,
                fd,
                resume is not None,
                session_id if private else None,
            )
            self._jobs[session_id] = job
        job.start()
        return job

    def forget(self, session_id: str) -> None:
        """Drop a session's finished job (an active one is stopped first)."""
        with self._lock:
            job = self._jobs.pop(session_id, None)
        if job is not None:
            job.stop()


REGISTRY = JobRegistry()
