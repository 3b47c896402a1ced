"""Explore's tools around one decode: the beam's n-best list, what-if edits, downloads."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from attnviz.decoding import Alignment
from attnviz.plots import (
    alignment_heatmap,
    alignment_json,
    changed_steps,
    matrix_csv,
    pharaoh_text,
    replace_token,
    step_table,
    whatif_figure,
)
from pages.explore.views import Panels, chart, columns
from pages.shared.common import escape_markdown, get_model, model_version, translate, user_errors

FORCE_STEP_KEY, FORCE_SOURCE_KEY = "explore_force_step", "explore_force_source"
REPLACE_INDEX_KEY, REPLACE_WORD_KEY = "explore_replace_index", "explore_replace_word"


def beam_view(panels: Panels, beam: int, image_format: str) -> None:
    """The n-best list of beam search with log-probabilities, each hypothesis with its heatmap."""
    if beam == 1:
        st.info("Greedy decoding (beam width 1). Raise the **Beam width** in the sidebar to see the n-best list.")
        return
    for col, (name, al) in zip(columns(panels), panels.items(), strict=True):
        with col:
            if len(panels) > 1:
                st.markdown(f"**{escape_markdown(name)}**")
            rows = [
                {"rank": k + 1, "translation": " ".join(h.output_tokens) or "(empty)",
                 "log p": round(float(h.log_prob), 4),
                 "log p / token": round(float(h.log_prob) / max(len(h.target_tokens), 1), 4)}
                for k, h in enumerate(al.hypotheses)
            ]  # fmt: skip
            st.dataframe(pd.DataFrame(rows), hide_index=True, key=f"explore_nbest_table_{name}")
            for k, h in enumerate(al.hypotheses[:3]):
                with st.expander(f"#{k + 1} · log p = {h.log_prob:.3f}", expanded=k == 0):
                    fig = alignment_heatmap(h)
                    chart(fig, f"explore_nbest_{name}_{k}", image_format, f"beam-{k + 1}-{name}")
    st.caption(
        r"Beam search keeps the $k$ best partial translations by $\log p(y_{1..t} \mid x)$ and ranks the finished"
        r" ones by $\log p / \text{length}$; each hypothesis has its own attention, since its decoder states differ."
    )


def _compare(
    original: Alignment, changed: Alignment, name: str, image_format: str, key: str, text_of: Callable[[Alignment], str]
) -> None:
    """The two decodes step by step (changed steps marked) and side by side."""
    st.markdown(
        f"**Original:** {escape_markdown(text_of(original) or '(empty)')}  \n"
        f"**{name.capitalize()}:** {escape_markdown(text_of(changed) or '(empty)')}"
    )
    steps = changed_steps(original.target_tokens, changed.target_tokens)
    if steps:
        st.warning(f"{len(steps)} target step(s) changed: {', '.join(map(str, steps))}")
    else:
        st.success("No target step changed.")
    table = step_table(original.target_tokens, changed.target_tokens, ("original", name))
    styled = table.style.apply(lambda row: ["background-color: #fdd0a2" if row["changed"] else ""] * len(row), axis=1)
    st.dataframe(styled, hide_index=True, key=f"{key}_table")
    chart(whatif_figure(original, changed, steps, ("original", name)), f"{key}_figure", image_format, key)


def _clamp(key: str, n: int) -> None:
    if not 0 <= st.session_state.get(key, 0) < n:
        st.session_state[key] = 0


def whatif_view(entry: dict, text: str, image_format: str) -> None:
    """Force one step's attention onto a source token, or replace a source word, and re-decode."""
    path, mtime = model_version(entry)
    with user_errors():
        base = translate(path, mtime, text)  # what-if works on the greedy decode
    st.caption(
        r"**Force attention**: at step $t$ the weights become a one-hot vector on the token you pick, so"
        r" $c_t = \bar h_s$; the decoder then continues from there (greedy). Later steps may change too."
    )
    n_tgt, n_src = len(base.target_tokens), len(base.source_tokens)
    _clamp(FORCE_STEP_KEY, n_tgt)
    _clamp(FORCE_SOURCE_KEY, n_src)
    left, right = st.columns(2)
    tgt, src = base.target_tokens, base.source_tokens
    step = left.selectbox("Decoder step", range(n_tgt), key=FORCE_STEP_KEY, format_func=lambda t: f"{t}: {tgt[t]}")
    source = right.selectbox(
        "Attend only to", range(n_src), key=FORCE_SOURCE_KEY, format_func=lambda s: f"{s}: {src[s]}"
    )
    onehot = tuple(1.0 if s == source else 0.0 for s in range(n_src))
    with user_errors():
        forced = translate(path, mtime, text, 1, ((int(step), onehot),))
    text_of = get_model(entry).text_of
    _compare(base, forced, "forced", image_format, "explore_whatif_force", text_of)

    st.divider()
    st.caption("**Replace a source word** and see which target steps change.")
    words = base.source_text_tokens
    _clamp(REPLACE_INDEX_KEY, len(words))
    left, right = st.columns(2)
    index = left.number_input("Word index", 0, len(words) - 1, step=1, key=REPLACE_INDEX_KEY)
    left.caption(f"Word {index}: “{escape_markdown(words[int(index)])}”")
    word = right.text_input("Replacement", key=REPLACE_WORD_KEY, placeholder="a word the model knows")
    if not word.strip():
        st.info("Type a replacement word to compare.")
        return
    char_level = get_model(entry).src_tokenizer.kind == "char"  # replace one character, keep the rest
    new_text = replace_token(words, int(index), word.strip(), char_level)
    st.markdown(f"New sentence: {escape_markdown(new_text)}")
    with user_errors():
        replaced = translate(path, mtime, new_text)
    _compare(base, replaced, "replaced", image_format, "explore_whatif_replace", text_of)


def export_view(al: Alignment, name: str) -> None:
    """Downloads: the matrices as CSV and JSON, the alignment in Pharaoh format."""
    st.caption(
        "The CSV files have one row per target step and one column per source token (blank where a score is"
        " $-\\infty$). The JSON holds everything the decode recorded (weights, scores, contexts, decoder states,"
        " n-best list). Pharaoh links each target step to its argmax source position as `source-target`. Figures:"
        " the camera button of each figure's toolbar saves it as PNG or SVG (choose in the sidebar)."
    )
    cols = st.columns(4)
    files = [
        ("Weights (CSV)", matrix_csv(al, "weights"), f"{name}-weights.csv", "text/csv", "explore_dl_weights"),
        ("Raw scores (CSV)", matrix_csv(al, "scores"), f"{name}-scores.csv", "text/csv", "explore_dl_scores"),
        ("Everything (JSON)", alignment_json(al), f"{name}-alignment.json", "application/json", "explore_dl_json"),
        ("Pharaoh", pharaoh_text(al), f"{name}.pharaoh", "text/plain", "explore_dl_pharaoh"),
    ]
    for col, (label, data, filename, mime, key) in zip(cols, files, strict=True):
        col.download_button(label, data, file_name=filename, mime=mime, key=key, on_click="ignore")
    st.markdown("**Pharaoh** (`source-target`, 0-based):")
    st.code(pharaoh_text(al).strip(), language=None)
