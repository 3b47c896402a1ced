"""attnviz traces written as attention files (:mod:`attnviz.external.attention_file`, the schema):
JSON for one trace or several named ones, NPZ for several of one sentence pair."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping

import numpy as np

from attnviz.decoding import Alignment
from attnviz.errors import DataError
from attnviz.external.attention_file import FORMAT, VERSION


def _named(alignments: Alignment | Mapping[str, Alignment]) -> dict[str, Alignment]:
    return {"attention": alignments} if isinstance(alignments, Alignment) else dict(alignments)


def attention_json(alignments: Alignment | Mapping[str, Alignment], metadata: dict | None = None) -> str:
    """One trace (the whole of it, :meth:`Alignment.to_dict`) or several named ones as an attention
    file: :func:`read_attention` gives them back."""
    head = {"format": FORMAT, "version": VERSION}
    tail = {"metadata": metadata} if metadata else {}
    if isinstance(alignments, Alignment):
        return json.dumps({**head, **alignments.to_dict(), **tail}, ensure_ascii=False, indent=1)
    matrices = [{"name": key, **al.to_dict()} for key, al in _named(alignments).items()]
    return json.dumps({**head, "matrices": matrices, **tail}, ensure_ascii=False, indent=1)


def attention_npz(alignments: Alignment | Mapping[str, Alignment], metadata: dict | None = None) -> bytes:
    """Several named traces of one sentence pair (the same tokens) as an NPZ attention file: weights
    ``[n, tgt, src]``, raw scores beside them, names, tokens and metadata."""
    named = _named(alignments)
    first = next(iter(named.values()))
    for key, al in named.items():
        if al.source_tokens != first.source_tokens or al.target_tokens != first.target_tokens:
            raise DataError(f"{key!r} has other tokens than the first matrix; an NPZ file holds one sentence pair")
    buffer = io.BytesIO()
    np.savez_compressed(
        buffer,
        source_tokens=np.array(first.source_tokens),
        target_tokens=np.array(first.target_tokens),
        weights=np.stack([np.asarray(al.weights, np.float32) for al in named.values()]),  # [n, tgt, src]
        scores=np.stack([np.asarray(al.scores, np.float32) for al in named.values()]),  # [n, tgt, src]
        names=np.array(list(named)),
        format=np.array(FORMAT),
        version=np.array(VERSION),
        metadata=np.array(json.dumps(metadata or {})),
    )
    return buffer.getvalue()
