"""What the catalog knows of one model: a :class:`ModelEntry`, built by one constructor per source
(the shipped models' manifest, a trained file's header, a checkpoint uploaded in the browser).

An entry is frozen and hashable, so a page may use it as a cache key: ``version`` (the file's
modification time when the entry was made) tells two versions of one file apart. ``metrics``
takes no part in equality or the hash: it is a nested mapping that the file's version already
pins down.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

PRETRAINED = "pretrained"  # a shipped model, listed in the manifest
TRAINED = "trained"  # a checkpoint in the models folder
UPLOADED = "uploaded"  # a checkpoint one browser session uploaded (attnviz.server)
HIDDEN_TASK = "uploaded data"  # the task shown for another session's model trained on its upload

# the keys of ``attnviz list --json``, in the order each source has always written them
_SHOWN = ("task", "score", "style", "example", "metrics", "parameters", "train_seconds")
# what a manifest item and a checkpoint's meta both describe under the entry's own names
_DESCRIBED = ("task", "score", "style", "example", "metrics", "parameters", "train_seconds", "precision", "device")
_MANIFEST_KEYS = ("name", *_SHOWN, "path", "source", "owner")
_FILE_KEYS = ("name", "path", "source", *_SHOWN, "owner")


@dataclass(frozen=True)
class ModelEntry:
    """One model of the catalog as one viewer may see it (see :func:`attnviz.store.list_models`)."""

    name: str
    path: str  # the checkpoint file
    source: str  # PRETRAINED, TRAINED or UPLOADED
    task: str | None  # a built-in task's name, a data spec, HIDDEN_TASK, or None (unknown data)
    score: str | None  # the attention score function (attnviz.model.SCORES)
    style: str | None  # the decoder style: "bahdanau" or "luong"
    example: str | None = None  # a sentence to open on; None where the viewer may not see it
    metrics: Mapping[str, Any] | None = field(default=None, compare=False)  # test-set metrics, as stored
    parameters: int | None = None
    train_seconds: float | None = None
    owner: str | None = None  # the session whose upload it was trained on (or which uploaded it)
    epochs: int | None = None  # epochs trained (the leaderboard's column)
    precision: str | None = None  # what it trained in ("fp32", "bf16", ...)
    device: str | None = None  # what it trained on
    version: float = 0.0  # the file's modification time when this entry was made; 0.0 when unknown
    unfinished: Mapping[str, int | None] | None = field(default=None, compare=False)  # {"epochs", "of"}: a stopped run

    @property
    def status(self) -> str:
        """Where it comes from, and for a training stopped before its last epoch how far it got:
        ``trained``, ``trained, unfinished: 1 of 4 epochs``."""
        if not self.unfinished:
            return self.source
        of = self.unfinished.get("of")
        return f"{self.source}, unfinished: {self.unfinished['epochs']}{f' of {of}' if of else ''} epochs"

    @classmethod
    def from_manifest(cls, item: Mapping[str, Any], folder: Path) -> ModelEntry:
        """A shipped model from its (cleaned) manifest ``item``; its file lies in ``folder``."""
        path = folder / item["file"]
        epochs = item.get("epochs")
        if not isinstance(epochs, int) or isinstance(epochs, bool):
            epochs = None
        described = {key: item.get(key) for key in _DESCRIBED}
        return cls(item["name"], str(path), PRETRAINED, **described, epochs=epochs, version=_mtime(path))

    @classmethod
    def from_trained(cls, path: Path, header: Mapping[str, Any], viewer: str | None) -> ModelEntry:
        """A checkpoint of the models folder from its validated ``header``, as ``viewer`` may see
        it: another session's model trained on its upload shows neither its example nor its task."""
        entry = cls._from_header(path.stem, path, header, TRAINED)
        if visible_to(header["meta"], viewer):
            return entry
        return replace(entry, example=None, task=HIDDEN_TASK if entry.task else None)

    @classmethod
    def from_upload(cls, name: str, path: Path, header: Mapping[str, Any], session: str) -> ModelEntry:
        """A checkpoint ``session`` uploaded (kept under ``path``), listed as ``name`` and owned by the session."""
        return replace(cls._from_header(name, path, header, UPLOADED), owner=session)

    @classmethod
    def _from_header(cls, name: str, path: Path, header: Mapping[str, Any], source: str) -> ModelEntry:
        meta, cfg = header["meta"], header["config"]
        described = {key: meta.get(key) for key in _DESCRIBED}
        described |= {"score": cfg.get("score"), "style": cfg.get("style"), "metrics": meta.get("metrics", {})}
        owner, epochs, unfinished = meta.get("owner"), meta.get("epochs_run"), _unfinished(meta)
        if unfinished:
            epochs = unfinished["epochs"]
        return cls(
            name,
            str(path),
            source,
            **described,
            owner=owner,
            epochs=epochs,
            version=_mtime(path),
            unfinished=unfinished,
        )

    def to_dict(self) -> dict[str, Any]:
        """The entry as ``attnviz list --json`` writes it (the keys and their order of its source, and
        ``unfinished`` for a training stopped before its last epoch)."""
        keys = _MANIFEST_KEYS if self.source == PRETRAINED else _FILE_KEYS
        listed = {key: getattr(self, key) for key in keys}
        if self.unfinished:  # a training stopped before its last epoch: how far it got
            listed["unfinished"] = dict(self.unfinished)
        return listed


def visible_to(meta: Mapping[str, Any], viewer: str | None) -> bool:
    """Whether ``viewer`` (a session id, None for the CLI's own user) may see the private parts
    of a model (its example sentence, its data path): yes unless another session owns it."""
    owner = meta.get("owner")
    return owner is None or owner == viewer


def _unfinished(meta: Mapping[str, Any]) -> dict[str, int | None] | None:
    """``{"epochs": done, "of": planned}`` for a checkpoint whose training stopped before its last epoch
    (its meta keeps a ``progress`` record to resume from), else None."""
    progress = meta.get("progress")
    done = progress.get("epoch") if isinstance(progress, Mapping) else None
    if not isinstance(done, int) or isinstance(done, bool):
        return None
    train = (meta.get("recipe_full") or {}).get("train") if isinstance(meta.get("recipe_full"), Mapping) else None
    of = train.get("epochs") if isinstance(train, Mapping) else None
    return {"epochs": done, "of": of if isinstance(of, int) and not isinstance(of, bool) else None}


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
