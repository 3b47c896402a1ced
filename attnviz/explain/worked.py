"""Numbers for the Learn page: attention worked out by hand, and what each score function learns.

The worked example runs a throw-away :class:`~attnviz.model.attention.Attention` (float64) whose
parameters are the small matrices the user typed, and writes each score's intermediates with
the same code and formatting as the math panel of a real cell (:mod:`attnviz.explain.steps`).
"""

from __future__ import annotations

import inspect
import math
import re
from dataclasses import dataclass, field

import numpy as np
import torch

from attnviz.errors import InputError
from attnviz.explain.cellmath import formula_for
from attnviz.explain.steps import Step, latex_value, matrix, num, score_steps, vector, weight_steps
from attnviz.model import SCORES, Attention, get_score


def score_reading(score: str, style: str) -> str:
    """Which decoder state queries the attention, in words (LaTeX inline)."""
    state = (
        "the previous decoder state $s_{t-1}$, before the RNN step (Bahdanau)"
        if style == "bahdanau"
        else "the current decoder state $h_t$, after the RNN step (Luong)"
    )
    if not get_score(score).content_based:  # a_t = softmax(W_a h_t): nothing to compare the query with
        return f"Query: {state}; the weights come from it alone (the score never looks at the encoder annotations)."
    return f"Query: {state}; compared with the encoder annotations $\\bar h_s$ through the score."


def score_formula(score: str, style: str | None = None) -> str:
    """The score's formula in LaTeX, as its paper writes it, or with the query that ``style``
    (``"bahdanau"``: s_{t-1}, ``"luong"``: h_t) reads."""
    formula = get_score(score).formula
    return formula if style is None else formula_for(formula, style)


# the docstrings' reStructuredText: :math:`...`, :class:`...` and ``...`` literals
_RST = re.compile(r":math:`([^`]+)`|:\w+:`~?([^`]+)`|``([^`]+)``")
_CODE = re.compile(r"\[[\w ,+]*\]|[a-z]{3,}|<\w+>")  # a shape, a name in the code, a special token
_PLAIN_MATH = {"h\u0304": r"\bar h", "h→": r"\overrightarrow{h}", "h←": r"\overleftarrow{h}", "<=": r"\le"}


def _markdown(found: re.Match) -> str:
    math, name, literal = found.groups()
    if math is not None:
        return f"${math}$"
    if name is not None:
        return f"`{name.split('.')[-1]}`"
    if _CODE.fullmatch(literal):
        return f"`{literal}`"
    for plain, latex in _PLAIN_MATH.items():  # symbols the docstrings spell in plain text
        literal = literal.replace(plain, latex)
    return f"${literal}$"


def score_doc(score: str) -> str:
    """The score class's docstring as Markdown: its formulas and symbols as ``$...$`` math, the
    code's names and tensor shapes as code."""
    text = inspect.cleandoc(get_score(score).__doc__ or "")
    return _RST.sub(_markdown, text).replace(" -> ", " → ")


def score_parameters(
    score: str, query_dim: int, key_dim: int, attn_dim: int, max_src_len: int, local_content: str = "general"
) -> dict:
    """Learned parameters ``name -> shape`` of an attention layer with these sizes, by their names
    in the formula (W_a, U_a, v_a, W_p, v_p; a local score's content parameters, those of
    ``local_content``, included). Sizes the score cannot take raise :class:`ConfigError` saying why."""
    layer = Attention(score, query_dim, key_dim, attn_dim, max_src_len, local_content=local_content)
    return {name: list(p.shape) for name, p in layer.score.formula_parameters().items()}


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
    transformed: np.ndarray  # [S, *] the score's projection of the keys (W_a h̄_s, U_a h̄_s), else the keys
    scores: np.ndarray  # [S] raw scores; -inf outside a local window
    exps: np.ndarray  # [S] exp(score - max), 0 outside a local window
    weights: np.ndarray  # [S] softmax (local-p: times the Gaussian)
    context: np.ndarray  # [d] sum_s a_s h̄_s
    score: str = "dot"
    parameters: dict[str, np.ndarray] = field(default_factory=dict)  # by their names in the formula
    steps: list[list[Step]] = field(default_factory=list)  # per key: from the key to e_s, then to a_s
    position: float | None = None  # p_t of local attention
    window: int | None = None  # D of local attention
    step: int = 0  # the decoder step t (local-m puts its window at p_t = min(t, S - 1))


def default_parameters(score: str, dim: int, n_keys: int, attn_dim: int | None = None) -> dict[str, np.ndarray]:
    """Easy numbers to start from, for the parameters of ``score`` on ``dim``-sized vectors and
    ``n_keys`` keys: ones on the (wrapped) diagonal of each matrix, ones in each vector, a single
    number's own initial value."""
    layer = Attention(score, dim, dim, attn_dim or dim, max_src_len=n_keys)
    out = {}
    for name, p in layer.score.formula_parameters().items():
        if p.dim() == 0:
            out[name] = p.detach().double().numpy().copy()
        elif p.dim() == 1:
            out[name] = np.ones(p.shape)
        else:
            rows, cols = p.shape  # [out, in]: concat's [A, 2d] starts as [I | I]
            out[name] = np.equal.outer(np.arange(rows) % cols, np.arange(cols) % rows).astype(np.float64)
    return out


def worked_example(
    query: list[float],
    keys: list[list[float]],
    score: str = "dot",
    W: list[list[float]] | None = None,
    parameters: dict[str, list] | None = None,
    window: int = 2,
    step: int = 0,
) -> WorkedExample:
    """Score, softmax and context vector for one query against a few keys (values = keys).

    ``parameters`` maps the formula's names (``W_a``, ``U_a``, ``v_a``, ``W_p``, ``v_p``) to
    matrices (lists of rows) or vectors; missing ones take :func:`default_parameters`. A ``v_*``
    vector of length ``A`` sets the inner size ``A`` (default: the query's size). ``W`` is
    ``W_a`` (the page's general example). ``window`` is local attention's ``D``, ``step`` its ``t``.
    """
    get_score(score)
    q = np.asarray(query, dtype=np.float64)  # [d]
    if not keys:
        raise InputError("give at least one key vector")
    if any(len(k) != len(q) for k in keys):
        raise InputError(f"every key needs {len(q)} numbers, like the query")
    k = np.asarray(keys, dtype=np.float64)  # [S, d]
    given = {**({"W_a": W} if W is not None else {}), **(parameters or {})}
    given = {name: _array(value, name) for name, value in given.items()}
    attn_dim = next((len(v) for name, v in given.items() if name.startswith("v") and v.ndim == 1), len(q))
    layer = Attention(score, len(q), len(q), attn_dim, max_src_len=len(k), window=window).double()
    values = {**default_parameters(score, len(q), len(k), attn_dim), **given}
    layer.score.set_formula_parameters({name: torch.from_numpy(v) for name, v in values.items()})

    query_t, keys_t = torch.from_numpy(q), torch.from_numpy(k)
    with torch.no_grad():
        memory = layer.prepare(keys_t.unsqueeze(0), torch.ones(1, len(k), dtype=torch.bool))
        out = layer(query_t.view(1, 1, -1), memory, torch.tensor([step]))  # T = 1
        scores = out.scores[0, 0]  # [S]
        position = None if out.positions is None else float(out.positions[0, 0])
        steps = [
            score_steps(layer, query_t, keys_t, step, s, "h_t", scores, position)
            + weight_steps(layer, scores, step, s, position)
            for s in range(len(k))
        ]
    finite = scores[torch.isfinite(scores)]
    return WorkedExample(
        query=q,
        keys=k,
        transformed=memory.cache[0].numpy(),
        scores=scores.numpy(),
        exps=torch.exp(scores - finite.max()).numpy(),  # shifted for stability; the softmax is unchanged
        weights=out.weights[0, 0].numpy(),
        context=out.context[0, 0].numpy(),
        score=score,
        parameters={name: p.detach().numpy().copy() for name, p in layer.score.formula_parameters().items()},
        steps=steps,
        position=position,
        window=layer.window if layer.is_local else None,
        step=step,
    )


def _array(value: list[float] | list[list[float]], name: str) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=np.float64)
    except ValueError:
        raise InputError(f"the rows of {name} must all have the same length") from None
    if array.size == 0:
        raise InputError(f"{name} is empty; type its numbers (rows separated by ';')")
    if array.ndim not in (0, 1, 2) or not np.all(np.isfinite(array)):
        raise InputError(f"{name} must be a number, a vector or a matrix of finite numbers (rows separated by ';')")
    return array


def worked_lines(ex: WorkedExample) -> dict[str, list[str]]:
    """The worked example in LaTeX, by section: the parameters, each key's score, each weight,
    the context vector. The same steps and formatting as the math panel of a real cell."""
    params = [rf"{name} = {matrix(p) if p.ndim == 2 else latex_value(p)}" for name, p in ex.parameters.items()]
    score_lines, weight_lines = [rf"h_t = {vector(ex.query)}"], []
    for steps in ex.steps:
        cut = next(i for i, s in enumerate(steps) if s.label == "e") + 1  # score steps end at e
        score_lines += [s.latex for s in steps[:cut] if s.latex not in score_lines]  # query-side terms once
        weight_lines += [s.latex for s in steps[cut:]]
    terms = " + ".join(rf"{num(a)} \cdot {vector(k)}" for a, k in zip(ex.weights, ex.keys, strict=True))
    context = [rf"c_{{{ex.step}}} = \sum_s a_{{{ex.step},s}} \bar h_s = {terms} = {vector(ex.context)}"]
    return {"parameters": params, "score": score_lines, "weights": weight_lines, "context": context}


def all_scores() -> list[str]:
    return list(SCORES)
