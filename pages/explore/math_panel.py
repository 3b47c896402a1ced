"""The math panel: the score function's formula with the numbers of one cell (t, s).

``cell_math`` is pure (numbers in, LaTeX lines out) so it is tested without Streamlit;
``show_math`` renders it with ``st.latex``.
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from attnviz.attention import SCORES
from attnviz.trace import Alignment
from pages.shared.common import escape_markdown

DIMS_SHOWN = 4
QUERY = {"bahdanau": r"s_{t-1}", "luong": r"h_t"}


def _num(x: float) -> str:
    """A number for LaTeX: 4 significant digits, scientific notation as ``a \\times 10^{b}``."""
    if not math.isfinite(x):
        return r"-\infty" if x < 0 else r"\infty"
    text = f"{x:.4g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        return rf"{mantissa} \times 10^{{{int(exponent)}}}"
    return text


def _vec(v: np.ndarray) -> str:
    shown = [_num(float(x)) for x in v[:DIMS_SHOWN]] + ([r"\ldots"] if v.size > DIMS_SHOWN else [])
    return "[" + ", ".join(shown) + "]"


def default_cell(al: Alignment) -> tuple[int, int]:
    """Step 0 and the source position it attends to most."""
    return 0, int(np.argmax(al.weights[0]))


def cell_math(al: Alignment, t: int, s: int, annotations: np.ndarray | None = None) -> list[str]:
    """LaTeX lines for cell ``(t, s)``: the formula, ``e_ts``, its softmax and its part of ``c_t``.

    ``annotations`` ``[S, K]`` are the encoder states ``h_s`` the context averages; without
    them the contribution is given as a weight only.
    """
    scores = np.asarray(al.scores[t], dtype=np.float64)  # [src]
    a = float(al.weights[t, s])
    lines = []
    formula = getattr(SCORES.get(al.score), "formula", None)
    if formula:
        lines.append(formula)
    e = float(scores[s])
    sub = f"{t},{s}"
    if not math.isfinite(e):
        lines.append(rf"e_{{{sub}}} = -\infty \quad \text{{(outside the local window: }} a_{{{sub}}} = 0)")
        return lines
    lines.append(rf"e_{{{sub}}} = \mathrm{{score}}({QUERY.get(al.style, 'h_t')}, \bar h_{{{s}}}) = {_num(e)}")
    finite = scores[np.isfinite(scores)]  # [n in window]
    shift = float(finite.max()) if finite.max() > 50 else 0.0  # exp(e - m) keeps huge scores finite
    denominator = float(np.exp(finite - shift).sum())
    align = math.exp(e - shift) / denominator
    over = r"_{|s'-p_t| \le D}" if al.window is not None else "_{s'}"
    m = f" - {_num(shift)}" if shift else ""
    lines.append(
        rf"\mathrm{{softmax}}: \frac{{\exp(e_{{{sub}}}{m})}}{{\sum{over} \exp(e_{{{t},s'}}{m})}}"
        rf" = \frac{{{_num(math.exp(e - shift))}}}{{{_num(denominator)}}} = {_num(align)}"
        rf" \quad ({finite.size} \text{{ terms}})"
    )
    if al.score == "local_p" and al.positions is not None and al.window is not None:
        p, sigma = float(al.positions[t]), al.window / 2
        gauss = math.exp(-((s - p) ** 2) / (2 * sigma**2))
        lines.append(
            rf"a_{{{sub}}} = \mathrm{{align}} \cdot \exp\left(-\frac{{(s - p_t)^2}}{{2\sigma^2}}\right)"
            rf" = {_num(align)} \cdot \exp\left(-\frac{{({s} - {_num(p)})^2}}{{2 \cdot {_num(sigma)}^2}}\right)"
            rf" = {_num(align)} \cdot {_num(gauss)} = {_num(a)}"
        )
    else:
        lines.append(rf"a_{{{sub}}} = {_num(a)}")
    if annotations is not None and s < len(annotations):
        h = np.asarray(annotations[s], dtype=np.float64)  # [K]
        c = np.asarray(al.contexts[t], dtype=np.float64)  # [K]
        part = a * h  # [K]
        share = float(part @ c / (c @ c)) if c @ c > 0 else 0.0
        lines.append(rf"a_{{{sub}}} \bar h_{{{s}}} = {_num(a)} \cdot {_vec(h)} = {_vec(part)}")
        lines.append(
            rf"\lVert a_{{{sub}}} \bar h_{{{s}}} \rVert = {_num(a)} \cdot {_num(float(np.linalg.norm(h)))}"
            rf" = {_num(float(np.linalg.norm(part)))}"
        )
        lines.append(rf"c_{{{t}}} = \sum_{{s'}} a_{{{t},s'}} \bar h_{{s'}} = {_vec(c)}")
        lines.append(
            rf"\lVert c_{{{t}}} \rVert = {_num(float(np.linalg.norm(c)))},\quad"
            rf" \frac{{a_{{{sub}}} \bar h_{{{s}}} \cdot c_{{{t}}}}}{{\lVert c_{{{t}}} \rVert^2}} = {share * 100:.1f}\%"
            r" \text{ of } c_t \text{ (other terms may cancel)}"
        )
    return lines


def selected_cell(event, al: Alignment) -> tuple[int, int]:
    """The cell clicked in a selectable heatmap (its ``customdata=[t, s]``), else the default one."""
    n_tgt, n_src = np.shape(al.weights)
    points = (event or {}).get("selection", {}).get("points", []) if hasattr(event, "get") else []
    for point in points:
        data = point.get("customdata")
        if isinstance(data, list | tuple) and len(data) == 2:
            t, s = int(data[0]), int(data[1])
            if 0 <= t < n_tgt and 0 <= s < n_src:
                return t, s
    return default_cell(al)


def show_math(al: Alignment, t: int, s: int, annotations: np.ndarray | None) -> None:
    """Render the math panel of cell ``(t, s)``."""
    src, tgt = al.source_tokens[s], al.target_tokens[t]
    st.markdown(
        f"**Cell** target step t={t} “{escape_markdown(tgt)}” ← source position s={s} “{escape_markdown(src)}”"
        " — click another cell of the heatmap to see its numbers."
    )
    for line in cell_math(al, t, s, annotations):
        st.latex(line)
