"""The files a trace is downloaded as: attention files (:mod:`attnviz.external.attention_file`, the
schema: JSON for one trace or several named ones, NPZ for several of one sentence pair), the matrix as
CSV, the argmax links as Pharaoh. Pure functions from alignments to file contents."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping

import numpy as np
import pandas as pd

from attnviz.decoding import Alignment
from attnviz.errors import DataError
from attnviz.external.attention_file import FORMAT, VERSION
from attnviz.external.file_links import word_links
from attnviz.links import common_steps
from attnviz.store import csv_text


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


def pair_json(panels: dict[str, Alignment], models: dict[str, str], sentence: str) -> str:
    """Several decodes of one sentence in one attention file (:func:`attention_json`): one matrix per
    panel (``"Bahdanau"``, ``"Luong"``) with everything its decode recorded, and the sentence and each
    panel's model in the metadata."""
    meta = {"sentence": sentence, "models": {name: models.get(name, "") for name in panels}}
    return attention_json(dict(panels), metadata=meta)


FLOAT_FORMAT = "%.9g"  # the digits that give a float32 back exactly (scores reach the hundreds)


def matrix_frame(al: Alignment, values: str = "weights") -> pd.DataFrame:
    """``[tgt, src]`` weights or raw scores: one row per target step, one column per source token,
    named ``position:token`` (``3:the``) so that a word the sentence repeats names two columns."""
    columns = [f"{s}:{token}" for s, token in enumerate(al.source_tokens)]
    frame = pd.DataFrame(al.matrix(values), columns=columns)  # [tgt, src], NaN outside a window
    frame.insert(0, "target", list(al.target_tokens))
    frame.insert(0, "step", range(len(al.target_tokens)))
    return frame


def matrix_csv(al: Alignment, values: str = "weights") -> str:
    """:func:`matrix_frame` as CSV (blank cells where a score is -inf), each number as the float32 it is."""
    return csv_text(matrix_frame(al, values), float_format=FLOAT_FORMAT)


def difference_csv(a: Alignment, b: Alignment) -> str:
    """``a``'s weights minus ``b``'s in each cell, laid out as :func:`matrix_csv` lays a matrix out, over
    the steps both decodes have (:func:`attnviz.links.common_steps`); a target is written ``x / y``
    where the two wrote different tokens. The sign the difference map shows by hue, as numbers."""
    a, b = common_steps(a, b)
    frame = matrix_frame(a)
    frame.iloc[:, 2:] = np.asarray(a.weights, dtype=np.float64) - np.asarray(b.weights, dtype=np.float64)
    frame["target"] = [x if x == y else f"{x} / {y}" for x, y in zip(a.target_tokens, b.target_tokens, strict=True)]
    return csv_text(frame, float_format=FLOAT_FORMAT)


def pair_csv(panels: dict[str, Alignment], models: dict[str, str], values: str = "weights") -> str:
    """Several decodes' matrices in one long CSV: one row per (panel, target step, source token)."""
    frames = []
    for name, al in panels.items():
        z = al.matrix(values)  # [tgt, src]
        t, s = np.meshgrid(range(z.shape[0]), range(z.shape[1]), indexing="ij")  # [tgt, src] each
        columns = {"panel": name, "model": models.get(name, ""), "step": t.ravel()}
        columns |= {"target": np.array(al.target_tokens)[t.ravel()], "position": s.ravel()}
        columns |= {"source": np.array(al.source_tokens)[s.ravel()], values: z.ravel()}
        frames.append(pd.DataFrame(columns))
    return csv_text(pd.concat(frames, ignore_index=True), float_format=FLOAT_FORMAT)


def pharaoh_text(al: Alignment) -> str:
    """The argmax links in Pharaoh ``source-target`` format, one line, over the words of the text as
    gold files and ``attnviz attention --gold`` count them: subword pieces joined, the links of
    ``<eos>`` (markers, not words) left out (:func:`attnviz.external.file_links.word_links`)."""
    return word_links(al, "argmax").to_pharaoh() + "\n"
