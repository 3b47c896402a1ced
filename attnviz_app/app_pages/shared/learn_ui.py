"""The Learn page's worked example: one attention step on vectors the user edits, for every score.

All arithmetic comes from attnviz.explain.worked (the same steps and formatting as Explore's math panel).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from attnviz.explain import (
    WorkedExample,
    all_scores,
    default_parameters,
    parse_vector,
    score_formula,
    worked_example,
    worked_lines,
)
from attnviz.links import whole_rows
from attnviz.model import is_predictive
from attnviz_app.app_pages.shared.common import user_errors


def _text(values: np.ndarray) -> str:
    """A number, a vector or a matrix as the text the boxes take: numbers by ',' and rows by ';'."""
    rows = values.tolist() if values.ndim == 2 else [np.atleast_1d(values).tolist()]  # a scalar: one number
    return "; ".join(", ".join(f"{x:g}" for x in row) for row in rows)


def worked_example_section() -> None:
    """Inputs (query, keys, the score's own parameters by the formula's names), then the score's
    intermediates, the softmax and the context vector written out with the numbers."""
    st.header("A worked example")
    c1, c2, c3 = st.columns(3)
    query_text = c1.text_input("Query $h_t$", "3, 1", key="learn_query", max_chars=100, persist_state="session")
    keys_text = c2.text_input(
        r"Keys $\bar h_s$ (one per ';')", "2, 6; 1, 0; 0, 2", key="learn_keys", max_chars=200, persist_state="session"
    )
    score = c3.selectbox("Score function", all_scores(), key="learn_worked_score", persist_state="session")
    with user_errors():
        query = parse_vector(query_text, "query")
        keys = [parse_vector(k, f"key {i + 1}") for i, k in enumerate(keys_text.split(";")) if k.strip()]
        defaults = default_parameters(score, len(query), max(len(keys), 1))
    given = {}
    if defaults:
        st.caption("The score's parameters, by their names in the formula (rows separated by ';'):")
        for col, (name, value) in zip(st.columns(len(defaults)), defaults.items(), strict=True):
            text = col.text_input(
                f"${name}$", _text(value), key=f"learn_param_{score}_{name}", max_chars=300, persist_state="session"
            )
            with user_errors():
                rows = [parse_vector(r, f"a row of {name}") for r in text.split(";") if r.strip()]
            if value.ndim == 2 or len(rows) != 1:  # none or several rows where one is due: the library says so
                given[name] = rows
            else:
                given[name] = rows[0][0] if value.ndim == 0 and len(rows[0]) == 1 else rows[0]
    with user_errors():
        ex = worked_example(query, keys, score, parameters=given, step=0)
        lines = worked_lines(ex)
    st.latex(score_formula(score, "luong"))  # the query box is h_t: the formula reads the same state
    st.markdown("**1. Score** each key against the query:")
    for line in lines["score"]:
        st.latex(line)
    if is_predictive(score):
        st.markdown("**2. Softmax**, then local-p's Gaussian, turns scores into weights:")
    else:
        st.markdown("**2. Softmax** turns scores into weights that sum to 1:")
    for line in lines["weights"]:
        st.latex(line)
    summed = "summed with those weights, not averaged" if is_predictive(score) else "averaged with those weights"
    st.markdown(f"**3. Context vector**: the keys {summed} (here the values are the keys):")
    for line in lines["context"]:
        st.latex(line)
    shown = [f"h̄{chr(0x2080 + s) if s < 10 else s} = [{', '.join(f'{x:g}' for x in k)}]" for s, k in enumerate(keys)]
    table = pd.DataFrame({"key": shown, "score": ex.scores, "weight": ex.weights})  # the math's names and digits
    digits = {c: st.column_config.NumberColumn(format="%.4g") for c in ("score", "weight")}
    st.dataframe(table, key="learn_worked_table", hide_index=True, column_config=digits)
    st.caption(closing_caption(ex))


def _share(share: float) -> str:
    """How much of the row's weight a key holds, in words (``share``: its part of the row's total)."""
    if share >= 0.95:
        return "almost all of the weight"
    if share > 0.5:
        return "most of the weight"
    return "the largest share of the weight, though not most of it"


def _gap(gap: float) -> str:
    """A score gap as the caption prints it: 3 significant digits, whole numbers from 1000 up."""
    return f"{gap:.3g}" if gap < 1000 else f"{gap:.0f}"


def _exponential(gap: float) -> str:
    """$e^{gap} \\approx ...$ for a score gap as printed: the power's digits, or a power of ten past 10^15."""
    power = _gap(gap)
    shown = float(power)
    if shown > 34.5:  # e^34.5 is about 10^15: digits past that say nothing a reader can use
        ratio = f"10^{{{shown / np.log(10):.0f}}}"
    else:
        ratio = f"{np.exp(shown):,.0f}" if shown > 7 else f"{np.exp(shown):.3g}"
        ratio = ratio.replace(",", "{,}")  # a thousands comma in math mode, without the space after it
    return f"$e^{{{power}}} \\approx {ratio}$"


def _names(keys: list[int]) -> str:
    names = [_key(k) for k in keys]
    return " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]


def closing_caption(ex: WorkedExample) -> str:
    """What this example's numbers show (from ``ex``, a WorkedExample): which key wins and by how
    much the softmax widened the gap, where the weights do not sum to 1 and why. Under local-p a
    key's share is of the row's total, and the Gaussian's part in the final weights is said."""
    weights = np.asarray(ex.weights, dtype=np.float64)  # [S]
    scores = np.asarray(ex.scores, dtype=np.float64)  # [S]; -inf outside a local window
    total = float(weights.sum())
    gaussian = is_predictive(ex.score)  # local-p multiplies the softmax by a Gaussian around p_t
    top = int(np.argmax(weights))
    share = weights[top] / total if total > 0 else 0.0
    said = [f"Key {_key(top)} takes {_share(share)} ({weights[top]:.4f}),"]
    tied = [s for s in range(len(scores)) if np.isfinite(scores[s]) and scores[s] == scores[top]]
    inside = [k for k in np.argsort(-weights) if np.isfinite(scores[k]) and k != top]
    if len(tied) > 1:
        said[0] = f"Keys {_names(tied)} tie with score {scores[top]:.4g}"
        if gaussian and len({round(float(weights[s]), 4) for s in tied}) > 1:
            said[0] += (
                f": the softmax gives them equal shares, and the Gaussian around $p_t = {ex.position:.3g}$ leaves"
                f" {_key(top)}, the nearest, the most ({weights[top]:.4f})"
            )
        else:
            said[0] += f": each takes {weights[top]:.4f},"
    elif inside:
        k = int(inside[0])
        gap = scores[top] - scores[k]
        digits = next(d for d in (4, 6, 8, 17) if d == 17 or f"{scores[top]:.{d}g}" != f"{scores[k]:.{d}g}")
        said[0] += f" with score {scores[top]:.{digits}g} against {scores[k]:.{digits}g} for key {_key(k)}"
        if gap > 0:
            turned = f"the softmax turns a score gap of {_gap(gap)} into a weight ratio of {_exponential(gap)}"
            if gaussian:
                turned += (
                    f" before the Gaussian, which makes it {weights[top] / weights[k]:.3g}"
                    if weights[k] > 0
                    else " before the Gaussian"
                )
            said.append(turned)
        elif gaussian:
            said.append(
                f"its score is not the larger one: the Gaussian around $p_t = {ex.position:.3g}$ favours the key"
                " nearer to it"
            )
    if not np.all(np.isfinite(scores)):
        said.append("keys outside the local window (score −∞) get weight 0")
    if not whole_rows(weights):
        said.append(
            f"the weights sum to {total:.4f}, not 1: local-p multiplies the softmax by a Gaussian, which leaves"
            " less than 1"
        )
    return _sentence(said)


def _key(s: int) -> str:
    """Key ``s`` as the worked example's math names it: $\\bar h_s$, from 0."""
    return f"$\\bar h_{{{s}}}$"


def _sentence(parts: list[str]) -> str:
    return "; ".join(parts).replace(",;", ";").rstrip(",") + "."
