"""The Train page's probe sentence: its alignment is drawn after every epoch and recorded for the
replay. A text box, and under it the sentences on offer: the data's example and the sentence
Explore shows, when that is in the data's source language."""

from __future__ import annotations

import streamlit as st

from attnviz.data import EXAMPLE, TASKS, multi30k_pair
from attnviz_app.app_pages.shared.common import escape_markdown
from attnviz_app.app_pages.shared.keys import EXPLORE_TASK, EXPLORE_TEXT

PROBE_KEY, PICK_KEY = "train_probe", "train_probe_pick"
MAX_CHARS = 80  # the probe box's limit
PROBES = {
    "toy-fr": EXAMPLE,
    "dates": "saturday 22nd of november 2026",
    "copy": "a b c d e",
    "reverse": "a b c d e",
    "sort": "h c a f c b",
}


def source_language(task: str | None) -> str | None:
    """The language of a task's source sentences: a Multi30k pair's first language, a built-in
    task's own (its name: its words are its own); None where it is not known (a file)."""
    if not task:
        return None
    pair = multi30k_pair(task)
    if pair:
        return pair[0]
    return task if task in TASKS else None


def probe_choices(spec: str, explore_task: str | None, explore_text: str | None) -> dict[str, str]:
    """The sentences offered for data ``spec``, by label: the data's example, then Explore's
    sentence (shown for ``explore_task``) when it is in the same source language; each once."""
    offered = {}
    if PROBES.get(spec):
        offered["example"] = PROBES[spec]
    text = (explore_text or "").strip()
    language = source_language(spec)
    same = language is not None and source_language(explore_task) == language
    if same and text and len(text) <= MAX_CHARS and text not in offered.values():
        offered["explore"] = text
    return offered


def _label(kind: str, sentence: str) -> str:
    shown = (
        sentence if len(sentence) <= MAX_CHARS else f"{sentence[: MAX_CHARS - 1]}…"
    )  # the box holds MAX_CHARS: all of it
    return f"{'Example' if kind == 'example' else 'From Explore'}: {escape_markdown(shown)}"


def _use_pick(choices: dict[str, str]) -> None:
    pick = st.session_state.get(PICK_KEY)
    if pick in choices:
        st.session_state[PROBE_KEY] = choices[pick]


def probe_input(spec: str) -> str:
    """The probe box (its text is returned, stripped) and the sentences offered under it; a pick
    writes its sentence into the box, which stays editable."""
    probe = st.text_input(
        "Probe sentence (its translation and alignment are drawn after every epoch)",
        max_chars=MAX_CHARS,
        key=PROBE_KEY,
        persist_state="session",
        help="Its translation and alignment are drawn after every epoch. The replay also records it when the "
        "data holds its translation, plus four test pairs.",
    )
    choices = probe_choices(spec, st.session_state.get(EXPLORE_TASK), st.session_state.get(EXPLORE_TEXT))
    if choices:
        # the pill of the sentence in the box is the one lit (none once the box is edited)
        st.session_state[PICK_KEY] = next((k for k, v in choices.items() if v == probe.strip()), None)
        st.pills(
            "Use a sentence",
            list(choices),
            format_func=lambda k: _label(k, choices[k]),
            key=PICK_KEY,
            on_change=_use_pick,
            args=(choices,),
            label_visibility="collapsed",
        )
    return probe.strip()
