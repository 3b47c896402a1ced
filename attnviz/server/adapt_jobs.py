"""Adaptation in the background for the app: a private copy of a model fine-tuned on a bitext
(:func:`attnviz.training.adapt`) in a daemon thread, its progress, a cancel, the copy, and a save.

The page keeps the :class:`AdaptJob` in its session and reads :meth:`AdaptJob.snapshot`; the
thread calls no Streamlit API. The copy lives in memory only (the model it came from, and that
model's file, are never changed); :func:`save_adapted` writes it into the models folder under a
free name on request, never over a file and never inside the shipped models' folder. At most
``ATTNVIZ_MAX_TRAININGS`` adaptations run at once in a process (:data:`ADAPTATIONS`), beside the
trainings; one whose session has gone stops after its current step.

:func:`upload_bitext` reads an uploaded bitext (one ``source ||| target`` file, or a source and a
target file) with :mod:`attnviz.links`' readers and refuses what cannot be adapted on with one
message each: a file over :data:`attnviz.links.textfile.MAX_FILE_BYTES`, a binary file, text
that is not UTF-8, an empty bitext, files of different line counts.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from attnviz.data import Words
from attnviz.decoding import Translator
from attnviz.errors import AttnvizError, ConfigError, DataError
from attnviz.links import MAX_FILE_BYTES, check_pairs, sentence_pairs, text_lines
from attnviz.server.jobs import BusyError, max_trainings
from attnviz.store import (
    STAGING,
    check_output,
    models_dir,
    move_no_clobber,
    name_lock,
    pretrained_dir,
    release_lock,
    reserve_name,
    save,
    slugify,
)
from attnviz.training import AdaptConfig, Progress, adapt

log = logging.getLogger(__name__)

RUNNING, DONE, FAILED, CANCELLED = "running", "done", "failed", "cancelled"
MAX_APP_PAIRS = 20_000  # more pairs are a job for `attnviz align-eval --adapt`


@dataclass(frozen=True)
class AdaptSnapshot:
    """A consistent copy of an adaptation's state for drawing."""

    status: str
    step: int
    total_steps: int
    loss: float | None
    error: str | None
    seconds: float

    @property
    def active(self) -> bool:
        return self.status == RUNNING

    @property
    def fraction(self) -> float:
        """Share of the planned steps done, in [0, 1]."""
        if self.status == DONE:
            return 1.0
        return min(1.0, self.step / self.total_steps) if self.total_steps else 0.0


@dataclass
class AdaptJob:
    """One adaptation in its own daemon thread; start it through :meth:`Adaptations.start`.

    ``model`` is whatever the caller keys the adapted model by (the app: its file's ``(path, mtime)``);
    ``origin`` says what the bitext was, for the page."""

    translator: Translator
    sources: list[Words]
    targets: list[Words]
    cfg: AdaptConfig
    model: tuple[str, float]
    origin: str = "the bitext"
    is_alive: Callable[[], bool] | None = None
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    status: str = RUNNING
    step: int = 0
    loss: float | None = None
    error: str | None = None
    result: Translator | None = None  # the adapted copy, once DONE
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    _cancel: threading.Event = field(default_factory=threading.Event, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"attnviz-adapt-{self.id[:8]}", daemon=True)
        self._thread.start()

    def cancel(self) -> None:
        """Stop after the current step; the partly adapted copy is dropped."""
        self._cancel.set()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def snapshot(self) -> AdaptSnapshot:
        with self._lock:
            end = self.finished if self.finished is not None else time.monotonic()
            return AdaptSnapshot(self.status, self.step, self.cfg.steps, self.loss, self.error, end - self.started)

    @property
    def label(self) -> str:
        """How the copy was made, for a table row: ``adapted 200 steps`` (``, guided``)."""
        info = (self.result.meta.get("adapted") or {}) if self.result is not None else {}
        steps = info.get("steps_run", self.cfg.steps)
        return f"adapted {steps} steps{', guided' if self.cfg.guided else ''}"

    def should_stop(self) -> bool:
        if not self._cancel.is_set() and self.is_alive is not None:
            try:
                gone = not self.is_alive()
            except Exception:  # a broken liveness probe must not end the adaptation
                gone = False
            if gone:
                log.info("adaptation %s abandoned by its session; stopping it", self.id[:8])
                self._cancel.set()
        return self._cancel.is_set()

    def _report(self, progress: Progress) -> None:
        if progress.kind == "step":
            with self._lock:
                self.step, self.loss = progress.step, progress.loss

    def _finish(self, status: str, error: str | None = None, result: Translator | None = None) -> None:
        with self._lock:
            self.status, self.error, self.result = status, error, result
            self.finished = time.monotonic()

    def _run(self) -> None:
        try:
            adapted = adapt(self.translator, self.sources, self.targets, self.cfg, self._report, self.should_stop)
        except AttnvizError as e:
            self._finish(FAILED, str(e))
        except Exception as e:  # a bug: keep the server alive, show a short message, log the rest
            log.exception("adaptation %s failed", self.id[:8])
            self._finish(FAILED, f"adaptation failed unexpectedly ({type(e).__name__}: {e})")
        else:
            if self._cancel.is_set():
                self._finish(CANCELLED, "cancelled; the partly adapted copy was dropped")
            else:
                self._finish(DONE, result=adapted)


class Adaptations:
    """The adaptations of this process: at most ``max_jobs`` at once (default ``$ATTNVIZ_MAX_TRAININGS``)."""

    def __init__(self, max_jobs: int | None = None):
        self._max_jobs = max_jobs
        self._jobs: list[AdaptJob] = []
        self._lock = threading.Lock()

    @property
    def max_jobs(self) -> int:
        return self._max_jobs if self._max_jobs is not None else max_trainings()

    def active(self) -> list[AdaptJob]:
        with self._lock:
            return [job for job in self._jobs if job.status == RUNNING]

    def start(
        self,
        translator: Translator,
        sources: list[Words],
        targets: list[Words],
        cfg: AdaptConfig,
        model: tuple[str, float],
        origin: str = "the bitext",
        is_alive: Callable[[], bool] | None = None,
    ) -> AdaptJob:
        """Adapt a copy of ``translator`` on the pairs in a new thread, or raise :class:`BusyError` when full.
        Each step runs on one thread unless ``cfg.num_threads`` says otherwise (the server's cores are shared)."""
        cfg = cfg if cfg.num_threads else replace(cfg, num_threads=1)
        with self._lock:
            # a job whose page went away (a reload) is told to stop now and frees its slot, rather than
            # refuse the new page until its next step notices
            self._jobs = [job for job in self._jobs if job.status == RUNNING and not job.should_stop()]
            if len(self._jobs) >= self.max_jobs:
                raise BusyError(
                    f"the server already adapts {len(self._jobs)} model(s), its limit (ATTNVIZ_MAX_TRAININGS="
                    f"{self.max_jobs}); try again when one finishes"
                )
            job = AdaptJob(translator, sources, targets, cfg, model, origin, is_alive)
            self._jobs.append(job)
        job.start()
        return job


ADAPTATIONS = Adaptations()


def upload_bitext(
    first: bytes, first_name: str, second: bytes | None = None, second_name: str | None = None
) -> tuple[list[Words], list[Words]]:
    """The sentence pairs of an uploaded bitext: ``first`` alone as ``source ||| target`` lines, or
    ``first`` and ``second`` as source and target sentences, line by line. A :class:`DataError`
    names the file and says what to fix."""
    files = [(first, first_name)] + ([(second, second_name or "target file")] if second is not None else [])
    for data, name in files:
        if len(data) > MAX_FILE_BYTES:
            raise DataError(
                f"{name} is over the {MAX_FILE_BYTES // 2**20} MB limit for a sentence file; adapt on a part of it"
            )
    lines = [text_lines(data, name) for data, name in files]  # binary refused; UTF-16 or UTF-32 with a BOM read
    names = (first_name, second_name if second is not None else None)
    sources, targets = sentence_pairs(lines[0], lines[1] if second is not None else None, names)
    if len(sources) > MAX_APP_PAIRS:
        raise DataError(
            f"{len(sources)} pairs are more than the app adapts on ({MAX_APP_PAIRS}); give a part of them, or "
            "adapt on all with `python -m attnviz align-eval --adapt N`"
        )
    check_pairs(sources, targets, (first_name, second_name or first_name))
    return sources, targets


def save_adapted(translator: Translator, name: str, folder: Path | None = None, owner: str | None = None) -> Path:
    """Write an adapted copy into the models folder as ``name`` (slugified), or ``name-2`` ... when the
    name is taken, shipped or being trained; never over a file, never inside the shipped models'
    folder. ``owner`` (a session) keeps the saved model private to it, as a model trained on an
    upload is. Returns the saved path."""
    folder = Path(folder) if folder is not None else models_dir()
    if folder.resolve().is_relative_to(pretrained_dir().resolve()):
        raise ConfigError(f"{folder} is the shipped models' folder, which the app never writes; set ATTNVIZ_MODELS")
    try:
        out, fd = reserve_name(folder, slugify(name))
    except OSError as e:
        raise ConfigError(
            f"cannot save into {folder} ({e.strerror or e}); make the folder writable or set ATTNVIZ_MODELS"
        ) from e
    staging = None
    try:
        check_output(out)  # refuses a place inside the shipped models' folder and an existing file
        staging = Path(tempfile.mkdtemp(prefix=".adapted-", dir=folder / STAGING))  # list_models never looks here
        kept = replace(translator, meta={**translator.meta, **({"owner": owner} if owner else {})})
        written = save(kept, staging / out.name)
        return move_no_clobber(written, folder, out.stem)
    except OSError as e:
        raise ConfigError(f"cannot save into {folder} ({e.strerror or e}); free some space or make it writable") from e
    finally:
        if staging is not None:
            with contextlib.suppress(OSError):
                shutil.rmtree(staging)
        release_lock(name_lock(folder, out.stem), fd)
