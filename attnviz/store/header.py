"""What a checkpoint's header and the shipped manifest may hold, checked by type in one place.

A checkpoint is untrusted input: its ``config`` and ``meta`` must be JSON objects, its header
at most :data:`MAX_HEADER_BYTES` and :data:`MAX_DEPTH` levels deep. Wrong-typed values that only
describe a model (a metric that is a string, a task that is a number) are dropped, so one edited
file shows less, never breaks a page; a wrong-typed ``owner`` refuses the file (it guards privacy).
The ``alignment_history`` field and its tensors are checked alike, in :mod:`attnviz.store.history`.
"""

from __future__ import annotations

import math

from attnviz.errors import CheckpointError

MAX_HEADER_BYTES = 4 * 2**20  # the safetensors header (weights' index + attnviz JSON); shipped ones are < 250 KB
MAX_DEPTH = 32  # nesting levels of the attnviz JSON header; attnviz writes at most 5

_TEXT = ("task", "example", "name", "device", "hardware", "precision", "ending")
_INTEGER = ("parameters", "epochs_run", "averaged_epochs")
_OBJECTS = ("recipe_full", "recipe", "guided", "probe")
_LISTS = ("history", "data_notes")


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def too_deep(value: object, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests lists/objects more than ``limit`` levels (checked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, dict | list):
                if depth + 1 > limit:
                    return True
                stack.append((child, depth + 1))
    return False


def clean_metrics(metrics: object, depth: int = 0) -> dict:
    """A metrics object with only numbers, true/false and None kept, a ``split`` name kept as
    text and a nested split's metrics (``valid``) cleaned alike; anything else is ``{}``."""
    if not isinstance(metrics, dict):
        return {}
    out = {}
    for k, v in metrics.items():
        if v is None or isinstance(v, bool) or _is_number(v) or (k == "split" and isinstance(v, str)):
            out[k] = v
        elif isinstance(v, dict) and depth == 0:
            out[k] = clean_metrics(v, depth + 1)
    return out


def clean_meta(meta: object, where: str) -> dict:
    """``meta`` with wrong-typed descriptive values dropped; raises :class:`CheckpointError` when
    ``meta`` is not an object or its ``owner`` is not a string."""
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise CheckpointError(f"{where}: field 'meta' must be a JSON object, not {type(meta).__name__}")
    owner = meta.get("owner")
    if owner is not None and not isinstance(owner, str):
        raise CheckpointError(f"{where}: field 'meta.owner' must be a string, not {type(owner).__name__}")
    out = dict(meta)
    for key in _TEXT:
        if key in out and out[key] is not None and not isinstance(out[key], str):
            del out[key]
    for key in _INTEGER:
        if key in out and not (isinstance(out[key], int) and not isinstance(out[key], bool)):
            del out[key]
    if "train_seconds" in out and not _is_number(out["train_seconds"]):
        del out["train_seconds"]
    for key, kind in [*((k, dict) for k in _OBJECTS), *((k, list) for k in _LISTS)]:
        if key in out and not isinstance(out[key], kind):
            del out[key]
    if "metrics" in out:
        out["metrics"] = clean_metrics(out["metrics"])
    return out


def validate_header(header: object, where: str) -> dict:
    """The attnviz header with ``config`` checked to be an object and ``meta`` cleaned
    (:func:`clean_meta`); raises :class:`CheckpointError` naming ``where`` and the field."""
    if not isinstance(header, dict):
        raise CheckpointError(f"{where}: the attnviz header must be a JSON object, not {type(header).__name__}")
    if too_deep(header):
        raise CheckpointError(f"{where}: the attnviz header nests more than {MAX_DEPTH} levels (attnviz writes 5)")
    config = header.get("config")
    if not isinstance(config, dict):
        raise CheckpointError(f"{where}: field 'config' must be a JSON object, not {type(config).__name__}")
    return {**header, "meta": clean_meta(header.get("meta"), where)}


def clean_manifest(entries: object, where: str) -> tuple[list[dict], list[str]]:
    """The well-formed manifest entries (objects with a string ``name`` and a plain ``file``
    name, metrics cleaned) and one line per entry skipped."""
    if not isinstance(entries, list):
        return [], [f"{where}: field 'models' must be a list, not {type(entries).__name__}"]
    kept, skipped = [], []
    for i, item in enumerate(entries):
        if not isinstance(item, dict):
            skipped.append(f"{where}: skipped models[{i}]: an entry must be a JSON object, not {type(item).__name__}")
            continue
        name, file = item.get("name"), item.get("file")
        plain = isinstance(file, str) and not any(c in file for c in "/\\") and not file.startswith(".")
        if not isinstance(name, str) or not plain:
            skipped.append(f"{where}: skipped models[{i}]: field 'name' or 'file' is missing or not a plain file name")
            continue
        text = (*_TEXT, "score", "style", "encoder")
        clean = {k: v for k, v in item.items() if k not in text or v is None or isinstance(v, str)}
        if "metrics" in clean:
            clean["metrics"] = clean_metrics(clean["metrics"])
        for key in ("parameters", "train_seconds"):
            if key in clean and clean[key] is not None and not _is_number(clean[key]):
                clean[key] = None
        kept.append(clean)
    return kept, skipped
