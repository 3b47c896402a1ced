"""Attention as a file: a JSON or NPZ schema any toolkit can write, read into ``Alignment`` traces.

One file holds one sentence pair: source tokens (columns), target tokens (rows) and one or more
``[target, source]`` attention matrices, each with an optional name (a layer, a head, a beam
hypothesis, a model) and the whole file with optional metadata. The schema (docs/your-model.md,
"Attention files"):

* ``source_tokens``, ``target_tokens``: lists of strings. A final ``</s>`` is read as ``<eos>``
  (attention parked there is a NULL link); subword pieces ending in ``@@`` merge into words.
* ``weights``: ``[tgt, src]`` one matrix, ``[n, tgt, src]`` n matrices named by ``names``, or
  ``[layers, heads, tgt, src]`` (named "layer L head H"). Finite values in [0, 1].
* ``scores`` (optional): the raw energies, the shape of ``weights``; ``null`` (JSON) or ``-inf``
  (NPZ) outside a window. Without them a matrix gets ``log(weights)``, the energies up to a
  per-row constant (the softmax of either is the same).
* ``matrices`` (JSON only): a list of objects, each ``{"name", "weights", "scores"?,
  "source_tokens"?, "target_tokens"?}`` with 2-D weights; its own tokens override the file's
  (beam hypotheses of different lengths).
* ``metadata`` (optional): a JSON object (NPZ: a JSON string), kept as it is.
* ``format`` (optional): ``"attnviz-attention"``; ``version``: 1.

attnviz's own export (:mod:`attnviz.external.trace_files`; Explore's "Everything (JSON)",
``attnviz translate --json``, ``attnviz align --json``) writes the same schema with the whole trace
beside the weights (contexts, decoder states, the score, the style, the beam's ``hypotheses``), and
reading it back gives the same ``Alignment``.

Tokens: a final ``</s>`` is read as ``<eos>``; SentencePiece pieces (``▁`` starts a word) are written
in attnviz's ``@@`` convention (:func:`sentencepiece_as_marks`) so that they merge into words.

Everything is checked (types, shapes, finite values, sizes up to the ``MAX_*`` limits) and a
problem raises :class:`~attnviz.errors.DataError` naming the file and the field. NPZ files are
read with ``allow_pickle=False``: nothing in a file runs code.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from attnviz.data import EOS, MARK, bom_encoding
from attnviz.decoding import Alignment
from attnviz.errors import DataError
from attnviz.external.attention_read import MAX_CELLS, npz_fields, strict_json

FORMAT = "attnviz-attention"
VERSION = 1
MAX_ATTENTION_BYTES = 50 * 2**20  # one attention file
MAX_TOKENS = 1000  # per side of a sentence
MAX_MATRICES = 1024  # e.g. 16 layers x 64 heads
MAX_TOKEN_CHARS = 200
MAX_METADATA_BYTES = 64 * 2**10
_END_MARKS = ("</s>", EOS)
_SP_MARK = "\u2581"  # SentencePiece's word start
# the trace fields of attnviz's own export, read back when present; the derived ones are ignored
_TRACE = (
    "contexts",
    "states",
    "score",
    "style",
    "log_prob",
    "source_unknown",
    "positions",
    "window",
    "encoder_attention",
    "hypotheses",
)
_DERIVED = ("coverage", "pharaoh", "unk_copies", "translation")  # `attnviz translate --json` adds the last
_MATRIX_KEYS = {"name", "weights", "scores", "source_tokens", "target_tokens", *_TRACE, *_DERIVED}
_FILE_KEYS = {"format", "version", "metadata", "matrices", "names", *_MATRIX_KEYS}

# The smallest useful file: two heads of one layer over one sentence pair (docs/your-model.md)
EXAMPLE_ATTENTION = {
    "format": FORMAT,
    "version": VERSION,
    "source_tokens": ["the", "black", "cat", "</s>"],
    "target_tokens": ["le", "chat", "noir", "</s>"],
    "matrices": [
        {
            "name": "layer 0 head 0",
            "weights": [[0.8, 0.1, 0.05, 0.05], [0.05, 0.1, 0.8, 0.05], [0.05, 0.8, 0.1, 0.05], [0.0, 0.0, 0.1, 0.9]],
        },
        {
            "name": "layer 0 head 1",
            "weights": [[0.25, 0.25, 0.25, 0.25], [0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1], [0.0, 0.0, 0.0, 1.0]],
        },
    ],
    "metadata": {"toolkit": "hand-made example", "direction": "en-fr"},
}


@dataclass
class AttentionFile:
    """What an attention file holds: named traces (file order) and its metadata."""

    alignments: dict[str, Alignment]
    metadata: dict = field(default_factory=dict)


def read_attention_file(path: str | Path) -> AttentionFile:
    """Read a JSON or NPZ attention file from disk (at most :data:`MAX_ATTENTION_BYTES`)."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path} is not a file; give a .json or .npz attention file")
    with path.open("rb") as f:
        data = f.read(MAX_ATTENTION_BYTES + 1)
    return read_attention(data, str(path))


def read_attention(data: bytes, name: str = "attention file") -> AttentionFile:
    """Read an attention file's bytes: NPZ (a zip archive) or JSON (UTF-8, or UTF-16 or UTF-32 after their
    byte-order mark, as Windows PowerShell's ``>`` writes a script's output), told apart by content."""
    if len(data) > MAX_ATTENTION_BYTES:
        raise DataError(
            f"{name}: over the {MAX_ATTENTION_BYTES // 2**20} MB limit of an attention file; keep fewer matrices"
        )
    if data[:4] == b"PK\x03\x04":
        return _from_mapping(npz_fields(data, name), name, npz=True)
    try:
        text = data.decode(bom_encoding(data[:4]))
    except UnicodeDecodeError as e:
        raise DataError(f"{name}: neither an NPZ archive nor UTF-8 JSON ({e.reason} at byte {e.start})") from None
    obj = strict_json(text, name)
    if not isinstance(obj, dict):
        raise DataError(f"{name}: the file must hold a JSON object with source_tokens, target_tokens and weights")
    return _from_mapping(obj, name, npz=False)


def _from_mapping(obj: Mapping, name: str, npz: bool) -> AttentionFile:
    unknown = sorted(set(obj) - _FILE_KEYS)
    if unknown:
        raise DataError(f"{name}: unknown field {unknown[0]!r}; the fields are {', '.join(sorted(_FILE_KEYS))}")
    if obj.get("format", FORMAT) != FORMAT:
        raise DataError(f"{name}: field 'format' is {obj['format']!r}; an attention file says {FORMAT!r} or nothing")
    version = obj.get("version", VERSION)
    if isinstance(version, bool | float) or version != VERSION:  # JSON's true and 1.0 are not the version 1
        raise DataError(f"{name}: field 'version' is {obj['version']!r}; this attnviz reads version {VERSION}")
    metadata = obj.get("metadata", {})
    if not isinstance(metadata, dict):
        raise DataError(f"{name}: field 'metadata' must be a JSON object")
    if len(json.dumps(metadata)) > MAX_METADATA_BYTES:
        raise DataError(f"{name}: field 'metadata' is over {MAX_METADATA_BYTES // 1024} KB; keep it short")
    found: dict[str, Alignment] = {}
    if "weights" in obj:
        for key, al in _top_level(obj, name, npz):
            _add(found, key, al, name)
    elif "names" in obj or "scores" in obj:
        raise DataError(f"{name}: field 'names' or 'scores' without 'weights'; add the weights they belong to")
    matrices = obj.get("matrices", [])
    if npz and matrices:
        raise DataError(f"{name}: an NPZ file stacks its matrices in 'weights' with their 'names'")
    if not isinstance(matrices, list):
        raise DataError(f"{name}: field 'matrices' must be a list of objects")
    for k, entry in enumerate(matrices):
        where = f"{name}: matrices[{k}]"
        if not isinstance(entry, dict):
            raise DataError(f"{where} must be an object with name and weights")
        unknown = sorted(set(entry) - _MATRIX_KEYS)
        if unknown:
            raise DataError(f"{where}: unknown field {unknown[0]!r}; a matrix has {', '.join(sorted(_MATRIX_KEYS))}")
        merged = {"source_tokens": obj.get("source_tokens"), "target_tokens": obj.get("target_tokens"), **entry}
        key = _text(entry.get("name", f"matrix {k + 1}"), f"{where}.name")
        al = _alignment(merged, where, npz=False)
        _add(found, key, al, name)
        _add_hypotheses(found, key, al, name)
    if not found:
        raise DataError(f"{name}: no attention matrix; give 'weights' [target, source] or a list of 'matrices'")
    cells = sum(al.weights.size for al in found.values())
    if len(found) > MAX_MATRICES or cells > MAX_CELLS:
        raise DataError(
            f"{name}: {len(found)} matrices of {cells} cells in all are more than attnviz reads "
            f"({MAX_MATRICES} matrices, {MAX_CELLS} cells); keep the layers or heads you want to see"
        )
    return AttentionFile(found, metadata)


def _add(found: dict[str, Alignment], key: str, al: Alignment, name: str) -> None:
    if key in found:
        raise DataError(f"{name}: two matrices are named {key!r}; give each its own name")
    found[key] = al


def _add_hypotheses(found: dict[str, Alignment], key: str, al: Alignment, name: str) -> None:
    for k, hyp in enumerate(al.hypotheses, start=1):
        if hyp is not al:
            _add(found, f"{key} · hypothesis {k}", hyp, name)


def _top_level(obj: Mapping, name: str, npz: bool) -> list[tuple[str, Alignment]]:
    weights = _array(obj["weights"], f"{name}: field 'weights'", ndims=(2, 3, 4))
    if weights.ndim == 2:
        key = _text(obj.get("name", "attention"), f"{name}: field 'name'")
        al = _alignment(obj, name, npz)
        hyp = [(f"{key} · hypothesis {k}", h) for k, h in enumerate(al.hypotheses, start=1) if h is not al]
        return [(key, al), *hyp]
    extra = sorted(set(obj) & {*_TRACE, "name"})
    if extra:
        raise DataError(f"{name}: field {extra[0]!r} belongs to a single [target, source] matrix, not to a stack")
    stack = weights.reshape(-1, *weights.shape[-2:])  # [n, tgt, src]
    if weights.ndim == 4:
        default = [f"layer {i} head {j}" for i in range(weights.shape[0]) for j in range(weights.shape[1])]
    else:
        default = [f"matrix {k + 1}" for k in range(len(stack))]
    names = obj.get("names", default)
    names = [str(n) for n in names] if isinstance(names, np.ndarray) and names.dtype.kind == "U" else names
    if not isinstance(names, list) or len(names) != len(stack):
        raise DataError(f"{name}: field 'names' must be a list of {len(stack)} strings, one per stacked matrix")
    scores = obj.get("scores")
    if scores is not None:
        scores = _array(scores, f"{name}: field 'scores'", ndims=(weights.ndim,), masked=True)
        if scores.shape != weights.shape:
            raise DataError(f"{name}: field 'scores' has shape {scores.shape} but 'weights' has {weights.shape}")
        scores = scores.reshape(stack.shape)
    out = []
    for k, w in enumerate(stack):
        key = _text(names[k], f"{name}: names[{k}]")
        one = {"source_tokens": obj.get("source_tokens"), "target_tokens": obj.get("target_tokens"), "weights": w}
        if scores is not None:
            one["scores"] = scores[k]
        out.append((key, _alignment(one, f"{name}: matrix {key!r}", npz)))
    return out


def _text(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_TOKEN_CHARS:
        raise DataError(f"{where} must be a non-empty string of at most {MAX_TOKEN_CHARS} characters")
    return value


def _tokens(value: object, where: str) -> list[str]:
    if isinstance(value, np.ndarray):
        if value.dtype.kind != "U" or value.ndim != 1:
            raise DataError(f"{where} must be a 1-D unicode array (np.array(tokens)), got {value.dtype} {value.shape}")
        value = [str(v) for v in value]
    if value is None:
        raise DataError(f"{where} is missing; give the list of token strings")
    if not isinstance(value, list) or not value:
        raise DataError(f"{where} must be a non-empty list of strings")
    if len(value) > MAX_TOKENS:
        raise DataError(f"{where} has {len(value)} tokens, more than {MAX_TOKENS}; split the sentence")
    for k, tok in enumerate(value):
        if not isinstance(tok, str) or len(tok) > MAX_TOKEN_CHARS:
            raise DataError(f"{where}[{k}] must be a string of at most {MAX_TOKEN_CHARS} characters, got {tok!r:.60}")
    tokens = [*value[:-1], EOS] if value[-1] in _END_MARKS else list(value)
    return sentencepiece_as_marks(tokens)


def _special(token: str) -> bool:
    return token.startswith("<") and token.endswith(">")


def sentencepiece_as_marks(tokens: list[str]) -> list[str]:
    """SentencePiece pieces (``▁`` starts a word: Marian, T5, mBART, NLLB) in attnviz's convention, where
    ``@@`` ends a piece that does not end its word, so that pieces merge into words as for attnviz's own
    BPE models: ``["▁the", "▁bl", "ack"]`` -> ``["the", "bl@@", "ack"]``. Tokens without ``▁``, or that
    already use ``@@``, are returned as they are; special tokens (``<...>``) stay words of their own."""
    if not any(t.startswith(_SP_MARK) for t in tokens) or any(t.endswith(MARK) for t in tokens):
        return list(tokens)
    starts = [i == 0 or t.startswith(_SP_MARK) or _special(t) or _special(tokens[i - 1]) for i, t in enumerate(tokens)]
    out = []
    for i, t in enumerate(tokens):
        word = t[len(_SP_MARK) :] if t.startswith(_SP_MARK) and t != _SP_MARK else t
        continued = i + 1 < len(tokens) and not starts[i + 1] and not _special(t)
        out.append(word + MARK if continued else word)
    return out


def _check_numbers(value: object, where: str, masked: bool) -> None:
    """Refuse a string or true/false where a number belongs (NumPy would read "0.8" and true as
    numbers); ``masked`` lets null stand for a masked score."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list | tuple):
            stack.extend(reversed(item))  # the first offender in reading order
        elif isinstance(item, bool) or not (isinstance(item, int | float) or (masked and item is None)):
            raise DataError(f"{where} must hold numbers, got {item!r} ({type(item).__name__})")


def _array(value: object, where: str, ndims: tuple[int, ...], masked: bool = False) -> np.ndarray:
    """A float array of one of ``ndims`` dimensions; ``masked`` allows null / -inf (masked scores)."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "fiu":
            raise DataError(f"{where} must hold numbers, got an array of {value.dtype}")
        a = value.astype(np.float64)
    else:
        _check_numbers(value, where, masked)
        try:
            a = np.array(_nulls(value) if masked else value, dtype=np.float64)
        except (ValueError, TypeError):
            raise DataError(f"{where} must be a rectangular nested list of numbers (every row as long)") from None
    if a.ndim not in ndims:
        raise DataError(f"{where} must have {' or '.join(map(str, ndims))} dimensions, got shape {a.shape}")
    if masked:
        a = np.where(np.isneginf(a), -np.inf, a)
        bad = np.isnan(a) | np.isposinf(a)
    else:
        bad = ~np.isfinite(a)
    if bad.any():
        raise DataError(
            f"{where} holds a value that is not a finite number at {tuple(int(i) for i in np.argwhere(bad)[0])}"
        )
    return a


def _nulls(value: object) -> object:
    """JSON nulls (masked scores) as -inf."""
    if isinstance(value, list):
        return [_nulls(v) for v in value]
    return -np.inf if value is None else value


def _optional(obj: Mapping, key: str, where: str, rows: int) -> np.ndarray | None:
    if obj.get(key) is None:
        return None
    a = _array(obj[key], f"{where}: field {key!r}", ndims=(1, 2, 4) if key == "encoder_attention" else (1, 2))
    if key != "encoder_attention" and a.shape[0] != rows:
        raise DataError(f"{where}: field {key!r} has {a.shape[0]} rows but there are {rows} target tokens")
    return a


def _alignment(obj: Mapping, where: str, npz: bool) -> Alignment:
    src = _tokens(obj.get("source_tokens"), f"{where}: field 'source_tokens'")
    tgt = _tokens(obj.get("target_tokens"), f"{where}: field 'target_tokens'")
    w = _array(obj["weights"], f"{where}: field 'weights'", ndims=(2,))
    if w.shape != (len(tgt), len(src)):
        raise DataError(
            f"{where}: field 'weights' has shape {w.shape} but there are {len(tgt)} target and {len(src)} source "
            "tokens; the matrix is [target, source], one row per target token"
        )
    if w.size and (w.min() < 0 or w.max() > 1 + 1e-6):
        raise DataError(f"{where}: field 'weights' must hold attention weights in [0, 1]; give the softmax, not logits")
    if obj.get("scores") is not None:
        scores = _array(obj["scores"], f"{where}: field 'scores'", ndims=(2,), masked=True)
        if scores.shape != w.shape:
            raise DataError(f"{where}: field 'scores' has shape {scores.shape} but 'weights' has {w.shape}")
    else:
        with np.errstate(divide="ignore"):
            scores = np.log(w)  # [tgt, src] the energies up to a per-row constant
    n = len(tgt)
    contexts = _optional(obj, "contexts", where, n)
    states = _optional(obj, "states", where, n)
    unknown = obj.get("source_unknown") or [False] * len(src)
    if not isinstance(unknown, list) or len(unknown) != len(src) or not all(isinstance(u, bool) for u in unknown):
        raise DataError(f"{where}: field 'source_unknown' must be a list of {len(src)} true/false values")
    texts = {k: obj.get(k, "") for k in ("score", "style")}
    if not all(isinstance(v, str) and len(v) <= MAX_TOKEN_CHARS for v in texts.values()):
        raise DataError(f"{where}: fields 'score' and 'style' must be short strings")
    log_prob, window = obj.get("log_prob", 0.0), obj.get("window")
    if isinstance(log_prob, bool) or not isinstance(log_prob, int | float) or not np.isfinite(log_prob):
        raise DataError(f"{where}: field 'log_prob' must be a finite number")
    if window is not None and (isinstance(window, bool) or not isinstance(window, int)):
        raise DataError(f"{where}: field 'window' must be a whole number or null")
    hypotheses = obj.get("hypotheses") or []
    if not isinstance(hypotheses, list) or not all(isinstance(h, dict) for h in hypotheses):
        raise DataError(f"{where}: field 'hypotheses' must be a list of objects, one per beam hypothesis")
    positions = _optional(obj, "positions", where, n)
    al = Alignment(
        source_tokens=src,
        target_tokens=tgt,
        weights=w.astype(np.float32),
        scores=scores.astype(np.float32),
        contexts=np.zeros((n, 0), np.float32) if contexts is None else contexts.reshape(n, -1).astype(np.float32),
        states=np.zeros((n, 0), np.float32) if states is None else states.reshape(n, -1).astype(np.float32),
        source_unknown=unknown,
        score=texts["score"],
        style=texts["style"],
        log_prob=float(log_prob),
        positions=positions,
        window=window,
        encoder_attention=_optional(obj, "encoder_attention", where, n),
        hypotheses=[_alignment(h, f"{where}: hypotheses[{k}]", npz) for k, h in enumerate(hypotheses)],
    )
    best = al.hypotheses[0] if al.hypotheses else None
    if best is not None and best.target_tokens == tgt and np.array_equal(best.weights, al.weights):
        al.hypotheses[0] = al  # beam search lists the best decode itself first
    return al
