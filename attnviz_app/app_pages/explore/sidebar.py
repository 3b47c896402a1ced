"""The Explore sidebar: task, score function, the Bahdanau | Luong | Both toggle, beam, display.

Every registered score is offered for every task; a combination without a model stays in the
list, marked, and the page says why it is missing instead of hiding it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import streamlit as st

from attnviz.model import SCORES
from attnviz.store import ModelEntry, default_score, default_style, front_example, matches, model_tasks, slots, task_of
from attnviz_app.app_pages.shared.checkpoint_upload import checkpoint_upload
from attnviz_app.app_pages.shared.choices import keep_choice
from attnviz_app.app_pages.shared.common import absent_models_note, escape_markdown, header_config
from attnviz_app.app_pages.shared.keys import EXPLORE_TASK, EXPLORE_TEXT
from attnviz_app.app_pages.shared.reading_ui import EOS_HELP, EOS_LABEL, merge_toggle

TASK_KEY, SCORE_KEY, STYLE_KEY, CKPT_KEY = EXPLORE_TASK, "explore_score", "explore_style", "explore_checkpoint"
BEAM_KEY, FORMAT_KEY, EOS_KEY = "explore_beam", "explore_image_format", "explore_eos"
MERGE_KEY = "explore_merge"
MAX_BEAM_WIDTH = 10
MODES = {"bahdanau": "Bahdanau", "luong": "Luong", "both": "Both"}
STYLE_HELP = (
    "Bahdanau attends with the previous decoder state $s_{t-1}$, Luong with the current one $h_t$. "
    "Both shows the two models side by side on one colour scale, with their difference."
)


@dataclass
class Choice:
    """What the sidebar picked."""

    task: str
    score: str
    mode: str  # "bahdanau", "luong" or "both"
    entries: dict[str, ModelEntry] = field(default_factory=dict)  # style -> catalog entry, for each style shown
    missing: dict[str, str] = field(default_factory=dict)  # style -> why it has no model
    beam: int = 1
    image_format: str = "png"
    hide_eos: bool = False
    merge: bool = False  # subword pieces merged into words (offered only for models with pieces)

    @property
    def styles(self) -> list[str]:
        return ["bahdanau", "luong"] if self.mode == "both" else [self.mode]

    @property
    def entry(self) -> ModelEntry | None:
        """The first shown model (Bahdanau's in Both)."""
        return next(iter(self.entries.values()), None)


def _on_task_change(models: list[ModelEntry]) -> None:
    """A new task gets its example sentence (a sentence of another task would be unknown words),
    and a score and style it has."""
    task = st.session_state.get(TASK_KEY)
    example = front_example(models, task)
    if example:
        st.session_state[EXPLORE_TEXT] = example
    score = default_score(models, task)
    if score and not any(
        slots(models, task)[st.session_state.get(SCORE_KEY), s].available for s in ("bahdanau", "luong")
    ):
        st.session_state[SCORE_KEY] = score


def _on_score_change(models: list[ModelEntry]) -> None:
    """A new score keeps one decoder style when that style has the score; otherwise it moves to
    the style that has it (a deliberate flip to a missing style still shows why it is missing).
    Both stays Both: each missing side says why, with a button that trains it."""
    task, score, mode = (st.session_state.get(k) for k in (TASK_KEY, SCORE_KEY, STYLE_KEY))
    grid = slots(models, task)
    if mode != "both" and (score, mode) in grid and not grid[score, mode].available:
        st.session_state[STYLE_KEY] = default_style(models, task, score)


def _open_checkpoint(entry: ModelEntry) -> None:
    """An uploaded (or just saved) checkpoint opens in the view: its task, score, style and file."""
    if st.session_state.get(TASK_KEY) != task_of(entry) and entry.example:
        st.session_state[EXPLORE_TEXT] = entry.example
    st.session_state[TASK_KEY], st.session_state[SCORE_KEY] = task_of(entry), entry.score
    if st.session_state.get(STYLE_KEY) != "both":
        st.session_state[STYLE_KEY] = entry.style
    st.session_state[f"{CKPT_KEY}_{entry.style}"] = entry.path


def checkpoint_label(name: str, task: str) -> str:
    """A checkpoint in its box: its name without the task the box above picked, so that the part
    that tells twins apart (``additive-bahdanau`` against ``additive-bahdanau-guided``) fits; the
    caption under the boxes gives the whole name."""
    short = name.removeprefix(f"{task}-")
    return short or name


def choose(models: list[ModelEntry]) -> Choice:
    """Draw the sidebar and return the choice."""
    tasks = model_tasks(models)
    keep_choice(TASK_KEY, tasks, str, tasks[0])
    st.sidebar.header("Model")
    task = st.sidebar.selectbox(
        "Task", tasks, key=TASK_KEY, persist_state="session", on_change=_on_task_change, args=(models,)
    )
    absent_models_note(st.sidebar)
    first = next(m for m in models if task_of(m) == task)
    grid = slots(models, task, header_config(first.path))
    scores = list(SCORES)

    def score_label(score: str) -> str:
        have = [s for s in ("bahdanau", "luong") if grid[score, s].available]
        if len(have) == 2:
            return f"{score}  ·  both styles"
        if have:
            return f"{score}  ·  {MODES[have[0]]} only"
        return f"{score}  ·  not trained"

    keep_choice(SCORE_KEY, scores, score_label, default_score(models, task))  # its label follows the task

    score = st.sidebar.selectbox(
        "Score function",
        scores,
        key=SCORE_KEY,
        persist_state="session",
        format_func=score_label,
        on_change=_on_score_change,
        args=(models,),
    )
    keep_choice(STYLE_KEY, list(MODES), MODES.get, default_style(models, task, score))
    mode = (
        st.sidebar.segmented_control(
            "Decoder style", list(MODES), key=STYLE_KEY, persist_state="session", format_func=MODES.get, help=STYLE_HELP
        )
        or "luong"
    )
    choice = Choice(task, score, mode)
    for style in choice.styles:
        slot = grid[score, style]
        if slot.available:
            choice.entries[style] = slot.entry
        else:
            choice.missing[style] = slot.reason or "not available"
    for style, entry in list(choice.entries.items()):
        found = matches(models, task, score, style)
        if len(found) > 1:
            by_path = {m.path: m for m in found}
            key = f"{CKPT_KEY}_{style}"

            def label(p: str, b: dict = by_path) -> str:
                return checkpoint_label(b[p].name, task)

            keep_choice(key, list(by_path), label, entry.path)
            path = st.sidebar.selectbox(f"{MODES[style]} checkpoint", list(by_path), key=key, format_func=label)
            choice.entries[style] = by_path[path]
    for style, entry in choice.entries.items():  # the checkpoints picked above, not their slots' first ones
        who = f"{MODES[style]} model" if len(choice.styles) > 1 else "Model"
        st.sidebar.caption(f"{who}: {escape_markdown(entry.name)} ({entry.status})")
    checkpoint_upload(models, on_open=_open_checkpoint)

    st.sidebar.header("Decoding and display")
    choice.beam = int(
        st.sidebar.slider(
            "Beam width",
            1,
            MAX_BEAM_WIDTH,
            key=BEAM_KEY,
            persist_state="session",
            help="1 = greedy. Above 1, the n-best list shows every beam.",
        )
    )
    choice.hide_eos = st.sidebar.toggle(
        EOS_LABEL,
        key=EOS_KEY,
        persist_state="session",
        help=EOS_HELP + " The figure title says when this is on.",
    )
    choice.merge = merge_toggle(MERGE_KEY, [e.path for e in choice.entries.values()], st.sidebar)
    choice.image_format = st.sidebar.radio(
        "Figure download format",
        ["png", "svg"],
        key=FORMAT_KEY,
        persist_state="session",
        horizontal=True,
        help="What the camera button in each figure's toolbar saves.",
    )
    return choice
