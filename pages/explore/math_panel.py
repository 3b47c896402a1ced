"""The math panel: every number behind one heatmap cell, from attnviz.explain.cellmath (no arithmetic here)."""

from __future__ import annotations

import streamlit as st

from attnviz.decoding import Alignment
from attnviz.errors import AttnvizError
from attnviz.explain import cell_numbers, latex_lines
from pages.shared.common import escape_markdown


def show_math(translator, al: Alignment, t: int, s: int, key: str) -> None:
    """The score's intermediates down to e_ts, the softmax, the context and the output at step t,
    with the full vectors as CSV/JSON downloads."""
    src, tgt = al.source_tokens[s], al.target_tokens[t]
    st.markdown(f"t={t} “{escape_markdown(tgt)}” ← s={s} “{escape_markdown(src)}”")
    try:
        cell = cell_numbers(translator, al, t, s)
    except AttnvizError as e:
        st.info(f"The numbers of this cell cannot be recomputed: {escape_markdown(str(e))}")
        return
    # one KaTeX block, not one element a line: many separate elements slow every rerun in the browser
    rows = [r"\displaystyle " + line for line in latex_lines(cell)]  # fractions as large as in a display
    st.latex(r"\begin{array}{l}" + r" \\[6pt] ".join(rows) + r"\end{array}")
    left, right = st.columns(2)
    # the files are written when a button is pressed, not in every rerun
    left.download_button("Every vector (CSV)", cell.to_csv, file_name=f"cell-{t}-{s}.csv", mime="text/csv",
                         key=f"{key}_csv", on_click="ignore")  # fmt: skip
    right.download_button("Every vector (JSON)", cell.to_json, file_name=f"cell-{t}-{s}.json",
                          mime="application/json", key=f"{key}_json", on_click="ignore")  # fmt: skip
