"""Explore's What-if view: force one step's attention onto a source token, or replace a source
word, and re-decode; in Both, each model is re-decoded and shown beside the other."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import streamlit as st

from attnviz.decoding import Alignment
from attnviz.plots import changed_steps, replace_word, share_scales, source_words, step_table, whatif_figure
from attnviz.store import ModelEntry
from attnviz_app.app_pages.explore.screen import column_width, page_width
from attnviz_app.app_pages.explore.sidebar import BEAM_KEY
from attnviz_app.app_pages.explore.views import MIN_SIDE_CELL_PX, SIDE_LABELS_PX, chart
from attnviz_app.app_pages.shared.choices import keep_choice
from attnviz_app.app_pages.shared.common import (
    escape_markdown,
    get_model,
    model_version,
    quoted,
    translate,
    user_errors,
)

if TYPE_CHECKING:
    import plotly.graph_objects as go

FORCE_STEP_KEY, FORCE_SOURCE_KEY = "explore_force_step", "explore_force_source"
REPLACE_INDEX_KEY, REPLACE_WORD_KEY = "explore_replace_index", "explore_replace_word"


def _figures(
    bases: dict[str, Alignment], changed: dict[str, Alignment], name: str, width: int, titles: dict[str, str]
) -> dict:
    """Each model's original and changed maps (changed steps outlined), every map on one scale."""
    figs = {
        panel: whatif_figure(
            base,
            changed[panel],
            changed_steps(base.target_tokens, changed[panel].target_tokens),
            ("original", name),
            max_width=width,
            title=titles[panel],
        )
        for panel, base in bases.items()
    }
    share_scales(list(figs.values()))
    return figs


def _compare(
    original: Alignment,
    changed: Alignment,
    fig: go.Figure,
    name: str,
    image_format: str,
    key: str,
    text_of: Callable[[Alignment], str],
    panel: str,
) -> None:
    """The two decodes step by step (changed steps marked) and ``fig``, their maps side by side."""
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
    chart(fig, f"{key}_figure", image_format, key.removeprefix("explore_"), panel)


def _layout(bases: dict[str, Alignment]) -> tuple[list, int]:
    """The models' columns (side by side where two what-if figures of each fit) and their width."""
    n_src = max(len(al.source_tokens) for al in bases.values())
    side = len(bases) > 1 and column_width(len(bases)) >= 2 * (SIDE_LABELS_PX + n_src * MIN_SIDE_CELL_PX)
    if side:
        return list(st.columns(len(bases), gap="small")), column_width(len(bases))
    return [st.container() for _ in bases], page_width()


def _heading(name: str, entry: ModelEntry, many: bool) -> None:
    if many:
        st.markdown(f"**{escape_markdown(name)}** · {escape_markdown(entry.name)}")


def whatif_view(entries: dict[str, ModelEntry], text: str, image_format: str) -> None:
    """Force one step's attention onto a source token, or replace a source word, and re-decode
    with every model shown (``entries``: panel name -> catalog entry)."""
    versions = {name: model_version(entry) for name, entry in entries.items()}
    with user_errors():  # what-if works on the greedy decode
        bases = {name: translate(*version, text) for name, version in versions.items()}
    many = len(entries) > 1
    st.caption(
        r"**Force attention**: at step $t$ the weights become a one-hot vector on the token you pick, so"
        r" $c_t = h_s$; the decoder then continues from there (greedy). Later steps may change too."
        + (" Both models are forced at the same step onto the same source token." if many else "")
        + (
            " What-if works on the greedy decode (beam width 1), so its original may differ from the beam's"
            " translation above."
            if int(st.session_state.get(BEAM_KEY) or 1) > 1
            else ""
        )
    )
    first = next(iter(bases.values()))
    n_tgt = max(len(al.target_tokens) for al in bases.values())
    src = first.source_tokens

    def step_label(t: int) -> str:
        words = [al.target_tokens[t] if t < len(al.target_tokens) else "–" for al in bases.values()]
        return f"{t}: {' / '.join(dict.fromkeys(words))}"

    def source_label(s: int) -> str:
        return f"{s}: {src[s]}"

    keep_choice(FORCE_STEP_KEY, range(n_tgt), step_label, 0)
    keep_choice(FORCE_SOURCE_KEY, range(len(src)), source_label, 0)

    left, right = st.columns(2)
    step = int(
        left.selectbox(
            "Decoder step", range(n_tgt), key=FORCE_STEP_KEY, format_func=step_label, persist_state="session"
        )
    )
    source = int(
        right.selectbox(
            "Attend only to",
            range(len(src)),
            key=FORCE_SOURCE_KEY,
            format_func=source_label,
            persist_state="session",
        )
    )
    cols, width = _layout(bases)
    ended = {name for name, base in bases.items() if step >= len(base.target_tokens)}  # nothing to force there
    forced = {}
    for name, base in bases.items():
        if name in ended:
            forced[name] = base
            continue
        onehot = tuple(1.0 if s == source else 0.0 for s in range(len(base.source_tokens)))
        with user_errors():
            forced[name] = translate(*versions[name], text, 1, ((step, onehot),))
    titles = {name: f"{name} · {entry.name} · forced" for name, entry in entries.items()}
    figs = _figures(bases, forced, "forced", width, titles)
    for col, (name, base) in zip(cols, bases.items(), strict=True):
        with col:
            _heading(name, entries[name], many)
            if name in ended:
                st.caption(
                    f"This translation has {len(base.target_tokens)} steps, so it has no step {step}: not forced."
                )
            text_of = get_model(entries[name]).text_of
            _compare(
                base, forced[name], figs[name], "forced", image_format, f"explore_whatif_force_{name}", text_of, name
            )

    st.divider()
    st.caption("**Replace a source word** and see which target steps change" + (" for each model." if many else "."))
    first_model = get_model(next(iter(entries.values())))
    words = source_words(first.source_text_tokens, first_model.src_tokenizer.kind == "char")  # pieces joined
    if not 0 <= st.session_state.get(REPLACE_INDEX_KEY, 0) < len(words):  # a number box: always a number
        st.session_state[REPLACE_INDEX_KEY] = 0
    left, right = st.columns(2)
    index = left.number_input("Word index", 0, len(words) - 1, step=1, key=REPLACE_INDEX_KEY, persist_state="session")
    left.caption(f"Word {index}: {quoted(words[int(index)])}")
    word = right.text_input(
        "Replacement", key=REPLACE_WORD_KEY, placeholder="a word the model knows", persist_state="session"
    )
    if not word.strip():
        st.info("Type a replacement word to compare.")
        return
    cols, width = _layout(bases)
    new_texts, replaced = {}, {}
    for name, base in bases.items():
        char_level = get_model(entries[name]).src_tokenizer.kind == "char"  # replace one character, keep the rest
        new_texts[name] = replace_word(base.source_text_tokens, int(index), word.strip(), char_level)
        with user_errors():
            replaced[name] = translate(*versions[name], new_texts[name])
    titles = {name: f"{name} · {entry.name} · replaced" for name, entry in entries.items()}
    figs = _figures(bases, replaced, "replaced", width, titles)
    for col, (name, base) in zip(cols, bases.items(), strict=True):
        with col:
            _heading(name, entries[name], many)
            st.markdown(f"New sentence: {escape_markdown(new_texts[name])}")
            text_of = get_model(entries[name]).text_of
            _compare(
                base,
                replaced[name],
                figs[name],
                "replaced",
                image_format,
                f"explore_whatif_replace_{name}",
                text_of,
                name,
            )
