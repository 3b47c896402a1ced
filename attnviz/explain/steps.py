"""The attention arithmetic as LaTeX lines: number and vector formatting, a named :class:`Step`, and
the steps from a key to its weight (the score's own terms, a local window, the softmax, local-p's
Gaussian). The math panel of a real cell (:mod:`attnviz.explain.cellmath`) and the Learn page's worked
example (:mod:`attnviz.explain.worked`) both write their lines with these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from torch import Tensor

from attnviz.model import Attention

DIMS_SHOWN = 4  # entries of a vector written out; the norm stands for the rest
_LATEX_SPECIALS = {c: "\\" + c for c in "#$%&_{}"} | {
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "\\": r"\textbackslash{}",
}


def num(x: float, digits: int = 4) -> str:
    """A number for LaTeX: ``digits`` significant digits, scientific notation as ``a \\times 10^{b}``."""
    if not math.isfinite(x):
        return r"-\infty" if x < 0 else r"\infty"
    text = f"{x:.{digits}g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        return rf"{mantissa} \times 10^{{{int(exponent)}}}"
    return text


def fraction(top: float, bottom: float) -> str:
    """``\\frac{top}{bottom}`` with as many significant digits (4 to 10) as it takes for two different
    numbers to look different: a weight of 0.9998 is not shown as 1.628e5 over 1.628e5."""
    digits = 4
    while digits < 10 and top != bottom and num(top, digits) == num(bottom, digits):
        digits += 1
    return rf"\frac{{{num(top, digits)}}}{{{num(bottom, digits)}}}"


def vector(v: np.ndarray) -> str:
    """``[a, b, c, d, …] (‖·‖ = n)``: the first entries, and the norm when some are left out."""
    v = np.asarray(v, dtype=np.float64).ravel()
    shown = [num(float(x)) for x in v[:DIMS_SHOWN]] + ([r"\ldots"] if v.size > DIMS_SHOWN else [])
    text = "[" + ", ".join(shown) + "]"
    if v.size > DIMS_SHOWN:
        text += rf"\ (\lVert \cdot \rVert = {num(float(np.linalg.norm(v)))})"
    return text


def matrix(m: np.ndarray) -> str:
    """A small matrix in full, as a LaTeX ``bmatrix``."""
    rows = np.atleast_2d(np.asarray(m, dtype=np.float64))
    return r"\begin{bmatrix}" + r" \\ ".join(" & ".join(num(float(x)) for x in row) for row in rows) + r"\end{bmatrix}"


def latex_value(value: np.ndarray) -> str:
    """A scalar as a number, a vector as :func:`vector`."""
    value = np.asarray(value)
    return num(float(value)) if value.ndim == 0 else vector(value)


def latex_text(word: str) -> str:
    """A token as LaTeX text, its special characters escaped."""
    return r"\text{" + "".join(_LATEX_SPECIALS.get(c, c) for c in word) + "}"


@dataclass
class Step:
    """One named intermediate: ``label`` (stable, for lookups and downloads), the LaTeX of its
    formula, its value (``[]`` or ``[n]``, float64) and optionally how the value is written."""

    label: str
    formula: str
    value: np.ndarray
    shown: str | None = None  # replaces latex_value(value) on the line, e.g. a word or a note
    word: str | None = None  # the vocabulary word a probability is of (the top words)

    @property
    def latex(self) -> str:
        """The line: ``formula = value``."""
        return f"{self.formula} = {latex_value(self.value) if self.shown is None else self.shown}"


def step(
    label: str, formula: str, value: Tensor | np.ndarray | float, shown: str | None = None, word: str | None = None
) -> Step:
    if isinstance(value, Tensor):
        value = value.detach().cpu().double().numpy()
    return Step(label, formula, np.asarray(value, dtype=np.float64), shown, word)


# -- the shared arithmetic: from the key to the weight ---------------------------------------------


def score_steps(
    att: Attention, query: Tensor, values: Tensor, t: int, s: int, q: str, scores: Tensor, position: float | None
) -> list[Step]:
    """From the key to ``e_{t,s}``: the score's own terms, then (local attention) the window.

    query ``[Q]``, values ``[S, K]`` one sentence's annotations, ``scores`` ``[S]`` the row of
    raw scores as :class:`Attention` masked it, ``position`` its ``p_t`` (local attention).
    """
    sub = f"{t},{s}"
    *inner, last = att.cell_terms(query, values, t, s, q)
    steps = [step(x.label, x.latex, x.value) for x in inner]
    if not att.is_local:
        return [*steps, step("e", rf"e_{{{sub}}} = {last.latex}", last.value)]
    e, D = float(scores[s]), att.window
    distance = abs(s - position)
    where = rf"\le D = {D}" if distance <= D else rf"> D = {D}"
    if distance > D and math.isfinite(e):
        where += r"\ \text{(kept: the real position nearest } p_t)"
    return [
        *steps,
        step("content score", rf"\mathrm{{score}}({q}, \bar h_{{{s}}}) = {last.latex}", last.value),
        step("distance to p_t", rf"|s - p_t| = |{s} - {num(position)}|", distance, f"{num(distance)} {where}"),
        step(
            "e",
            rf"e_{{{sub}}}",
            e if math.isfinite(e) else -math.inf,
            num(e) if math.isfinite(e) else r"-\infty \quad \text{(outside the window)}",
        ),
    ]


def weight_steps(att: Attention, scores: Tensor, t: int, s: int, position: float | None) -> list[Step]:
    """From the row of raw scores ``[S]`` to the weight ``a_{t,s}``: the softmax (over the window
    for local attention), then local-p's Gaussian."""
    sub = f"{t},{s}"
    row = scores.detach().cpu().double().numpy()
    e = float(row[s])
    if not math.isfinite(e):
        return [step("a", rf"a_{{{sub}}}", 0.0, r"0 \quad \text{(outside the window)}")]
    finite = row[np.isfinite(row)]  # [n in window]
    top = float(finite.max())
    shift = top if abs(top) > 50 else 0.0  # exp(e - m) keeps scores far from 0 finite and non-zero
    denominator = float(np.exp(finite - shift).sum())
    align = math.exp(e - shift) / denominator
    over = r"_{|s'-p_t| \le D}" if att.is_local else "_{s'}"
    m = "" if not shift else f" - {num(shift)}" if shift > 0 else f" + {num(-shift)}"
    softmax = step(
        "softmax",
        rf"\mathrm{{softmax}}: \frac{{\exp(e_{{{sub}}}{m})}}{{\sum{over} \exp(e_{{{t},s'}}{m})}}"
        rf" = {fraction(math.exp(e - shift), denominator)}",
        align,
        rf"{num(align)} \quad ({finite.size} \text{{ terms}})",
    )
    if not att.is_predictive:
        return [softmax, step("a", rf"a_{{{sub}}}", align)]
    sigma = att.window / 2
    gauss = math.exp(-((s - position) ** 2) / (2 * sigma**2))
    return [
        softmax,
        step(
            "gaussian",
            rf"\exp\left(-\frac{{(s - p_t)^2}}{{2\sigma^2}}\right) = "
            rf"\exp\left(-\frac{{({s} - {num(position)})^2}}{{2 \cdot {num(sigma)}^2}}\right)",
            gauss,
        ),
        step(
            "a", rf"a_{{{sub}}} = \mathrm{{align}} \cdot \exp(\ldots) = {num(align)} \cdot {num(gauss)}", align * gauss
        ),
    ]
