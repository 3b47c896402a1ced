"""Numbers for the Learn page: attention worked out by hand, and what each score function learns.

Pure NumPy (plus building a throw-away :class:`~attnviz.attention.Attention` to count its
parameters), so the page shows the same arithmetic a reader would do on paper.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass

import numpy as np

from attnviz.attention import SCORES, Attention, get_score
from attnviz.errors import InputError

WORKED_SCORES = ("dot", "scaled_dot", "general")


def reads(score: str, style: str) -> str:
    """Which decoder state queries the attention, in words (LaTeX inline)."""
    if not get_score(score).content_based and score == "location":
        where = "the decoder state alone (it never looks at the encoder annotations)"
    else:
        where = "the encoder annotations $\\bar h_s$ through the score"
    state = (
        "the previous decoder state $s_{t-1}$, before the RNN step (Bahdanau)"
        if style == "bahdanau"
        else "the current decoder state $h_t$, after the RNN step (Luong)"
    )
    return f"Query: {state}; compared with {where}."


def formula(score: str) -> str:
    """The score's formula in LaTeX."""
    return get_score(score).formula


def score_doc(score: str) -> str:
    """The score class's docstring, dedented."""
    return inspect.cleandoc(get_score(score).__doc__ or "")


def score_parameters(score: str, query_dim: int, key_dim: int, attn_dim: int, max_src_len: int) -> dict:
    """Learned parameters ``name -> shape`` of an attention layer with these sizes."""
    layer = Attention(score, query_dim, key_dim, attn_dim, max_src_len)
    return {name: list(p.shape) for name, p in layer.named_parameters()}


def parameter_rows(shapes: dict[str, list[int]]) -> list[dict]:
    """One row per parameter with its shape and element count (for a table)."""
    return [
        {"parameter": n, "shape": " × ".join(map(str, s)) or "scalar", "count": math.prod(s)} for n, s in shapes.items()
    ]


def parse_vector(text: str, what: str = "vector") -> list[float]:
    """``"3, 1"`` -> ``[3.0, 1.0]``; raises :class:`InputError` with a hint when unreadable."""
    parts = [p for p in text.replace(";", ",").replace(" ", ",").split(",") if p]
    if not parts:
        raise InputError(f"the {what} is empty; type numbers separated by commas, e.g. 3, 1")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise InputError(f"the {what} {text!r} is not a list of numbers; type e.g. 3, 1") from None
    if not all(math.isfinite(v) and abs(v) <= 1e3 for v in values):
        raise InputError(f"the {what} must hold finite numbers between -1000 and 1000")
    if len(values) > 8:
        raise InputError(f"the {what} has {len(values)} numbers; keep it to 8 or fewer to follow by hand")
    return values


@dataclass
class WorkedExample:
    """Every intermediate number of one attention step."""

    query: np.ndarray  # [d]
    keys: np.ndarray  # [S, d]
    transformed: np.ndarray  # [S, d] W_a h̄_s for general, the keys otherwise
    scores: np.ndarray  # [S]
    exps: np.ndarray  # [S] exp(score - max)
    weights: np.ndarray  # [S] softmax
    context: np.ndarray  # [d] sum_s a_s h̄_s


def worked_example(
    query: list[float], keys: list[list[float]], score: str = "dot", W: list[list[float]] | None = None
) -> WorkedExample:
    """Score, softmax and context vector for one query against a few keys (values = keys)."""
    if score not in WORKED_SCORES:
        raise InputError(f"the worked example covers {', '.join(WORKED_SCORES)}, not {score!r}")
    q = np.asarray(query, dtype=np.float64)  # [d]
    if not keys:
        raise InputError("give at least one key vector")
    if any(len(k) != len(q) for k in keys):
        raise InputError(f"every key needs {len(q)} numbers, like the query")
    k = np.asarray(keys, dtype=np.float64)  # [S, d]
    transformed = k
    if score == "general":
        w = np.eye(len(q)) if W is None else np.asarray(W, dtype=np.float64)
        if w.shape != (len(q), len(q)):
            raise InputError(f"W_a must be {len(q)} × {len(q)} (rows separated by ';')")
        transformed = k @ w.T  # [S, d]: W_a h̄_s
    scores = transformed @ q  # [S]
    if score == "scaled_dot":
        scores = scores / math.sqrt(len(q))
    exps = np.exp(scores - scores.max())  # [S], shifted for stability; the softmax is unchanged
    weights = exps / exps.sum()
    return WorkedExample(q, k, transformed, scores, exps, weights, weights @ k)


def all_scores() -> list[str]:
    return list(SCORES)
