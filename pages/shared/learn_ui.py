"""The Learn page's worked example: one attention step on vectors the user edits."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from attnviz import explain
from pages.shared.common import user_errors


def _vec(v) -> str:
    return r"\begin{bmatrix}" + r" \\ ".join(f"{x:g}" for x in v) + r"\end{bmatrix}"


def _num(x: float) -> str:
    return f"{x:.4g}"


def worked_example_section() -> None:
    """Inputs, then score, softmax and context vector written out with the numbers."""
    st.header("A worked example")
    c1, c2, c3 = st.columns(3)
    query_text = c1.text_input("Query h_t", "3, 1", key="learn_query", max_chars=100)
    keys_text = c2.text_input("Keys h̄_s (one per ';')", "2, 6; 1, 0; 0, 2", key="learn_keys", max_chars=200)
    score = c3.selectbox("Score", explain.WORKED_SCORES, key="learn_worked_score")
    w_text = "1, 0; 0, 1"
    if score == "general":
        w_text = st.text_input("W_a (rows separated by ';')", "1, 0; 0, 1", key="learn_w", max_chars=200)
    with user_errors():
        query = explain.parse_vector(query_text, "query")
        keys = [explain.parse_vector(k, f"key {i + 1}") for i, k in enumerate(keys_text.split(";")) if k.strip()]
        w = [explain.parse_vector(r, "row of W_a") for r in w_text.split(";") if r.strip()]
        ex = explain.worked_example(query, keys, score, w if score == "general" else None)

    st.markdown("**1. Score** each key against the query:")
    scale = rf"\frac{{1}}{{\sqrt{{{len(query)}}}}}" if score == "scaled_dot" else ""
    for s, (key, tk) in enumerate(zip(ex.keys, ex.transformed, strict=True), start=1):
        products = " + ".join(f"{q:g}\\cdot{k:g}" for q, k in zip(ex.query, tk, strict=True))
        lhs = f"e_{s} = {scale} h_t^\\top " + ("W_a " if score == "general" else "") + _vec(key)
        st.latex(f"{lhs} = {scale}({products}) = {_num(ex.scores[s - 1])}")
    st.markdown("**2. Softmax** turns scores into weights that sum to 1:")
    denom = " + ".join(f"e^{{{_num(e)}}}" for e in ex.scores)
    for s, a in enumerate(ex.weights, start=1):
        st.latex(f"a_{s} = \\frac{{e^{{{_num(ex.scores[s - 1])}}}}}{{{denom}}} = {_num(a)}")
    st.markdown("**3. Context vector**: the keys averaged with those weights (here the values are the keys):")
    terms = " + ".join(f"{_num(a)}\\cdot{_vec(k)}" for a, k in zip(ex.weights, ex.keys, strict=True))
    st.latex(f"c_t = {terms} = {_vec(ex.context.round(4))}")
    table = pd.DataFrame({"key": [str(list(k)) for k in keys], "score": ex.scores.round(4),
                          "weight": ex.weights.round(4)})  # fmt: skip
    st.dataframe(table, key="learn_worked_table", hide_index=True)
    st.caption("The largest score takes most of the weight: the softmax exaggerates differences, so a score of "
               "12 against 3 puts almost all attention on the first key.")  # fmt: skip
