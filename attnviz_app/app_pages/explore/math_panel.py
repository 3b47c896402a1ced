"""The math panel: every number behind one heatmap cell, from attnviz.explain.cellmath (no arithmetic here)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attnviz.data import EOS
from attnviz.decoding import Alignment, Translator
from attnviz.errors import AttnvizError
from attnviz.explain import cell_numbers, latex_lines
from attnviz.links import whole_rows
from attnviz_app.app_pages.explore.sidebar import EOS_KEY
from attnviz_app.app_pages.shared.common import escape_markdown, quoted


def renormalised_note(al: Alignment, t: int, s: int) -> str | None:
    """Why the map's weight of cell (t, s) differs from the model's own one below, when ``<eos>``
    is hidden: the map rescales the row to its total without ``<eos>`` (None when nothing differs)."""
    if al.source_tokens[-1:] != [EOS] or s >= len(al.source_tokens) - 1:
        return None
    row = np.asarray(al.weights[t], dtype=np.float64)  # [src]
    total, rest = float(row.sum()), float(row[:-1].sum())
    if rest <= 0 or abs(row[s] * total / rest - row[s]) < 5e-4:
        return None  # the map shows the model's own weight, to the 3 decimals written
    own = f" The numbers below are the model's own, {row[s]:.3g}, with `<eos>` ({row[-1]:.3g})."
    if whole_rows(row):  # a softmax row: the one question the figures' caption asks too
        return (
            f"The map hides `<eos>` and rescales each row to sum to 1 without it: it shows"
            f" {row[s]:.3g} / {rest:.3g} = **{row[s] / rest:.3f}**, this weight over the row's weight off `<eos>`."
            + own
        )
    return (
        f"The map hides `<eos>` and rescales each row to keep its total, {total:.3g}, without it: it shows"
        f" {row[s]:.3g} × {total:.3g} / {rest:.3g} = **{row[s] * total / rest:.3f}**, this weight times the row's"
        f" total over its weight off `<eos>`." + own
    )


def show_math(translator: Translator, al: Alignment, t: int, s: int, key: str, file_stem: str) -> None:
    """The score's intermediates down to e_ts, the softmax, the context and the output at step t,
    with the full vectors as CSV/JSON downloads named ``file_stem`` (the model, the sentence, the cell)."""
    src, tgt = al.source_tokens[s], al.target_tokens[t]
    st.markdown(f"t={t} {quoted(tgt)} ← s={s} {quoted(src)}")
    note = renormalised_note(al, t, s) if st.session_state.get(EOS_KEY) else None
    if note:
        st.caption(note)
    try:
        cell = cell_numbers(translator, al, t, s)
    except AttnvizError as e:
        st.info(f"The numbers of this cell cannot be recomputed: {escape_markdown(str(e))}")
        return
    # one KaTeX block, not one element a line: many separate elements slow every rerun in the browser
    rows = [r"\displaystyle " + line for line in latex_lines(cell)]  # fractions as large as in a display
    st.latex(r"\begin{array}{l}" + r" \\[6pt] ".join(rows) + r"\end{array}")
    # the files are written when a button is pressed, not in every rerun
    files = (("CSV", cell.to_csv, "csv", "text/csv"), ("JSON", cell.to_json, "json", "application/json"))
    for col, (kind, data, ext, mime) in zip(st.columns(2), files, strict=True):
        name = f"{file_stem}.{ext}"  # after the model and the sentence, as every Explore file
        col.download_button(
            f"Every vector ({kind})", data, file_name=name, mime=mime, key=f"{key}_{ext}", on_click="ignore"
        )
