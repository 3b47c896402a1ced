"""The Explore sidebar: a model by task, score function and decoder style; a second one to show
side by side; the beam width; the image format of figure downloads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from pages.shared.common import model_label

TEXT_KEY = "explore_text"
TASK_KEY, SCORE_KEY, STYLE_KEY, CKPT_KEY = "explore_task", "explore_score", "explore_style", "explore_checkpoint"
SIDE_KEY, OTHER_KEY = "explore_side_by_side", "explore_other"
BEAM_KEY, FORMAT_KEY = "explore_beam", "explore_image_format"
MAX_BEAM_WIDTH = 10
STYLE_NAMES = {"bahdanau": "Bahdanau (reads s_{t-1})", "luong": "Luong (reads h_t)"}


@dataclass
class Choice:
    """What the sidebar picked."""

    entry: dict  # the catalog entry of the model to explore
    other: dict | None  # a second model for the side-by-side view
    beam: int
    image_format: str  # "png" or "svg"


def task_of(entry: dict) -> str:
    return entry.get("task") or "other"


def _select(label: str, options: list, key: str, format_func: Callable = str, **kwargs):
    """A keyed sidebar selectbox whose remembered value is dropped when it is no longer offered."""
    if st.session_state.get(key) not in options:
        st.session_state[key] = options[0]
    return st.sidebar.selectbox(label, options, key=key, format_func=format_func, **kwargs)


def _on_task_change(models: list[dict]) -> None:
    """A new task gets that task's example sentence: a sentence of another task would be all unknown words."""
    task = st.session_state.get(TASK_KEY)
    example = next((m["example"] for m in models if task_of(m) == task and m.get("example")), None)
    if example:
        st.session_state[TEXT_KEY] = example


def choose_model(models: list[dict]) -> dict:
    """Task, then score function, then decoder style (then the checkpoint, if several match)."""
    tasks = list(dict.fromkeys(task_of(m) for m in models))
    task = _select("Task", tasks, TASK_KEY, on_change=_on_task_change, args=(models,))
    of_task = [m for m in models if task_of(m) == task]
    score = _select("Score function", list(dict.fromkeys(m["score"] for m in of_task)), SCORE_KEY)
    of_score = [m for m in of_task if m["score"] == score]
    styles = list(dict.fromkeys(m["style"] for m in of_score))
    style = _select("Decoder style", styles, STYLE_KEY, format_func=lambda s: STYLE_NAMES.get(s, str(s)))
    matches = [m for m in of_score if m["style"] == style]
    if len(matches) == 1:
        st.sidebar.caption(f"Model: `{matches[0]['name']}` ({matches[0]['source']})")
        return matches[0]
    by_path = {m["path"]: m for m in matches}
    path = _select("Checkpoint", list(by_path), CKPT_KEY, format_func=lambda p: by_path[p]["name"])
    return by_path[path]


def choose(models: list[dict]) -> Choice:
    """Draw the sidebar and return the choice."""
    st.sidebar.header("Model")
    entry = choose_model(models)
    other = None
    if len(models) > 1 and st.sidebar.toggle("Side by side with another model", key=SIDE_KEY):
        rest = {m["path"]: m for m in models if m["path"] != entry["path"]}
        same_task = [p for p, m in rest.items() if task_of(m) == task_of(entry)]
        options = same_task + [p for p in rest if p not in same_task]
        path = _select("Second model", options, OTHER_KEY, format_func=lambda p: model_label(rest[p]))
        other = rest[path]
    st.sidebar.header("Decoding")
    beam = st.sidebar.slider(
        "Beam width", 1, MAX_BEAM_WIDTH, 1, key=BEAM_KEY, help="1 = greedy. Above 1, the n-best list shows every beam."
    )
    fmt = st.sidebar.radio(
        "Figure download format",
        ["png", "svg"],
        key=FORMAT_KEY,
        horizontal=True,
        help="What the camera button in each figure's toolbar saves.",
    )
    return Choice(entry, other, int(beam), fmt)
