"""An :class:`~attnviz.decoding.AlignmentHistory` inside a checkpoint: its points and probes in the
header field ``alignment_history``, each probe's attention as a float16 tensor
``alignment_history.K`` ``[points, T, S]`` beside the weights.

A checkpoint is untrusted input. The history only describes how a model was trained, so a
malformed one (a wrong type, a shape that does not match its probe, weights outside [0, 1], more
than :data:`MAX_POINTS` points or :data:`MAX_PROBES` probes) is dropped with a
:class:`~attnviz.store.paths.ModelWarning` and the model still loads.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import torch

from attnviz.decoding import POINT_KINDS, POINT_NUMBERS, AlignmentHistory, HistoryProbe
from attnviz.store.paths import ModelWarning

FIELD = "alignment_history"  # the header field
PREFIX = f"{FIELD}."  # tensor names: alignment_history.0, alignment_history.1, ...
FORMAT_VERSION = 1
MAX_POINTS = 128
MAX_PROBES = 8
MAX_TOKENS = 128  # per side of a probe
ROLES = ("probe", "test")


class _Malformed(ValueError):
    pass


def history_tensors(history: AlignmentHistory) -> dict[str, torch.Tensor]:
    """The probes' attention as float16 tensors named ``alignment_history.K``."""
    return {
        f"{PREFIX}{k}": torch.from_numpy(np.ascontiguousarray(w, dtype=np.float16))
        for k, w in enumerate(history.weights)
    }


def history_header(history: AlignmentHistory) -> dict:
    """The header field: format version, points and probes (without their weights)."""
    return {
        "format_version": FORMAT_VERSION,
        "points": [dict(p) for p in history.points],
        "probes": [p.to_dict() for p in history.probes],
    }


def is_history_tensor(name: str) -> bool:
    return name.startswith(PREFIX)


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _tokens(value: object, what: str) -> list[str]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_TOKENS or not all(isinstance(t, str) for t in value):
        raise _Malformed(f"{what} must be a list of 1 to {MAX_TOKENS} strings")
    return list(value)


def _links(value: object, n_src: int, n_tgt: int, what: str) -> list[tuple[int, int]] | None:
    if value is None:
        return None
    ok = isinstance(value, list) and all(
        isinstance(link, list) and len(link) == 2 and all(_count(x) for x in link) for link in value
    )
    if not ok or any(i >= n_src or j >= n_tgt for i, j in value):
        raise _Malformed(f"{what} must be [source, target] index pairs inside the probe's tokens")
    return [(int(i), int(j)) for i, j in value]


def _probe(item: object, k: int) -> HistoryProbe:
    if not isinstance(item, dict) or item.get("role") not in ROLES:
        raise _Malformed(f"probe {k} must be an object with a role of {', '.join(ROLES)}")
    src, tgt = (
        _tokens(item.get("source_tokens"), f"probe {k} source_tokens"),
        _tokens(item.get("target_tokens"), f"probe {k} target_tokens"),
    )
    n_src, n_tgt = len(src) - 1, len(tgt) - 1  # gold links never reach <eos>
    sure = _links(item.get("sure"), n_src, n_tgt, f"probe {k} sure")
    possible = _links(item.get("possible"), n_src, n_tgt, f"probe {k} possible")
    return HistoryProbe(item["role"], src, tgt, sure, possible)


def _point(item: object, k: int) -> dict:
    if not isinstance(item, dict) or item.get("kind") not in POINT_KINDS:
        raise _Malformed(f"point {k} must be an object with a kind of {', '.join(POINT_KINDS)}")
    if not (_count(item.get("step")) and _count(item.get("epoch"))):
        raise _Malformed(f"point {k} needs whole-number step and epoch fields")
    point = {"kind": item["kind"], "step": item["step"], "epoch": item["epoch"]}
    for key in POINT_NUMBERS:
        value = item.get(key)
        if value is not None and not _number(value):
            raise _Malformed(f"point {k} field {key} must be a number or null")
        point[key] = value
    return point


def _checked(field: object, tensors: dict[str, torch.Tensor]) -> AlignmentHistory:
    if not isinstance(field, dict) or field.get("format_version") != FORMAT_VERSION:
        raise _Malformed(f"the header field must be an object with format_version {FORMAT_VERSION}")
    points, probes = field.get("points"), field.get("probes")
    if not isinstance(points, list) or len(points) > MAX_POINTS:
        raise _Malformed(f"points must be a list of at most {MAX_POINTS}")
    if not isinstance(probes, list) or not 1 <= len(probes) <= MAX_PROBES:
        raise _Malformed(f"probes must be a list of 1 to {MAX_PROBES}")
    points = [_point(p, k) for k, p in enumerate(points)]
    probes = [_probe(p, k) for k, p in enumerate(probes)]
    if set(tensors) != {f"{PREFIX}{k}" for k in range(len(probes))}:
        raise _Malformed(f"it needs one tensor {PREFIX}K per probe, found {sorted(tensors)[:4]}")
    weights = []
    for k, probe in enumerate(probes):
        w = tensors[f"{PREFIX}{k}"]
        if w.dtype not in (torch.float16, torch.float32) or tuple(w.shape) != (len(points), *probe.shape):
            raise _Malformed(f"tensor {PREFIX}{k} must be float [{len(points)}, {probe.shape[0]}, {probe.shape[1]}]")
        w = w.float().numpy()
        if not np.all(np.isfinite(w)) or (w.size and (w.min() < 0 or w.max() > 1.001)):
            raise _Malformed(f"tensor {PREFIX}{k} must hold attention weights in [0, 1]")
        weights.append(w.astype(np.float16))
    return AlignmentHistory(probes, points, weights)


def history_from(field: object, tensors: dict[str, torch.Tensor], where: str) -> AlignmentHistory | None:
    """The history of a checkpoint's header ``field`` and its ``alignment_history.K`` tensors;
    None (with a :class:`ModelWarning` when something was there) if it is absent or malformed."""
    if field is None and not tensors:
        return None
    try:
        return _checked(field, tensors)
    except _Malformed as e:
        warnings.warn(f"{where}: its alignment history was skipped ({e})", ModelWarning, stacklevel=3)
        return None
