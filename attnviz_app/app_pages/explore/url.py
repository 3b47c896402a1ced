"""Explore's state as the URL's query: what a copied link, Back and Forward restore.

``?task=multi30k-en-fr&score=dot&style=both&text=...&view=Per+step&step=2&cell=1,3&beam=3``
``&bahdanau=NAME&luong=NAME&hide_eos=1&merge=1&format=svg&links=dtw`` (``links``: the Alignment view's
method, with that view open): a parameter at its default is left
out (a checkpoint when it is its slot's first), and a parameter left out means its default. A
link that names something unknown here opens that part with its default and says so in one line.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, TypeVar

import streamlit as st

from attnviz.model import SCORES
from attnviz.store import ModelEntry, absent_models, default_score, default_style, front_example, matches, model_tasks
from attnviz_app.app_pages.explore import sidebar
from attnviz_app.app_pages.explore.alignment import METHOD_KEY
from attnviz_app.app_pages.explore.alignment import METHODS as LINK_METHODS
from attnviz_app.app_pages.explore.views import CELL_KEY, LINK_ASKED, STEP_KEY
from attnviz_app.app_pages.shared.common import escape_markdown
from attnviz_app.app_pages.shared.keys import EXPLORE_TEXT
from attnviz_app.app_pages.shared.state import stage_url, url_to_read, write_url

if TYPE_CHECKING:
    from streamlit.delta_generator import DeltaGenerator

_T = TypeVar("_T")

VIEW_KEY = "explore_view"  # the open view (st.tabs' key)
VIEWS = [
    "Weights",
    "Raw scores",
    "Per step",
    "Context vectors",
    "Attribution",
    "Beam search",
    "What-if",
    "Alignment",
    "Training",
    "Export",
]
BOTH_VIEWS = [*VIEWS[:6], "Difference", *VIEWS[6:]]
STYLES = ("bahdanau", "luong")
FORMATS = ("png", "svg")
MAX_TEXT = 1000
_NOTE = "explore_url_note"  # (note, the URL it was read from or None): what a link's unknown parts fell back to
FLAGS = {"hide_eos": sidebar.EOS_KEY, "merge": sidebar.MERGE_KEY}
KNOWN = ("task", "score", "style", "text", "view", "cell", "step", "beam", "format", "links", *STYLES, *FLAGS)


class _Bad(ValueError):
    """A value of the link that this server cannot show."""


def _int(raw: str, low: int, high: int | None = None) -> int:
    value = int(raw)
    if value < low or (high is not None and value > high):
        raise _Bad(raw)
    return value


def _cell(raw: str) -> tuple[int, int]:
    t, s = raw.split(",")
    return _int(t, 0), _int(s, 0)


def _flag(raw: str) -> bool:
    if raw not in ("0", "1"):
        raise _Bad(raw)
    return raw == "1"


def _one_of(raw: str, options: Collection[str]) -> str:
    if raw not in options:
        raise _Bad(raw)
    return raw


def _checkpoint(models: list[ModelEntry], task: str, score: str, style: str, name: str | None) -> str | None:
    """The path of the checkpoint ``name`` of this slot (its first one when ``name`` is None)."""
    found = matches(models, task, score, style)
    if name is None:
        return found[0].path if found else None
    path = next((m.path for m in found if m.name == name), None)
    if path is None:
        raise _Bad(name)
    return path


def _read(models: list[ModelEntry], query: dict[str, str]) -> list[str]:
    """Set Explore's state from ``query``, every parameter it leaves out to its default; the
    parts that could not be read, as ``name “value”``."""
    bad: list[str] = [f"“{name}”" for name in query if name not in KNOWN]

    def take(name: str, parse: Callable[[str], _T], default: _T) -> _T:
        raw = query.get(name)
        if raw is None:
            return default
        try:
            return parse(raw)
        except ValueError:
            bad.append(f"{name} “{raw[:40]}”")
            return default

    tasks = model_tasks(models)
    task = take("task", lambda v: _one_of(v, tasks), tasks[0])
    score = take("score", lambda v: _one_of(v, SCORES), default_score(models, task) or next(iter(SCORES)))
    style = take("style", lambda v: _one_of(v, sidebar.MODES), default_style(models, task, score))
    views = BOTH_VIEWS if style == "both" else VIEWS
    state = {
        sidebar.TASK_KEY: task,
        sidebar.SCORE_KEY: score,
        sidebar.STYLE_KEY: style,
        EXPLORE_TEXT: take("text", lambda v: v[:MAX_TEXT], front_example(models, task) or ""),
        sidebar.BEAM_KEY: take("beam", lambda v: _int(v, 1, sidebar.MAX_BEAM_WIDTH), 1),
        VIEW_KEY: take("view", lambda v: _one_of(v, views), views[0]),
        f"{VIEW_KEY}__kept": None,
        STEP_KEY: take("step", lambda v: _int(v, 0), 0),
        sidebar.FORMAT_KEY: take("format", lambda v: _one_of(v, FORMATS), FORMATS[0]),
        METHOD_KEY: take("links", lambda v: _one_of(v, LINK_METHODS), LINK_METHODS[0]),
        **{key: take(name, _flag, False) for name, key in FLAGS.items()},
    }
    for style_name in STYLES:
        default = _checkpoint(models, task, score, style_name, None)
        path = take(style_name, lambda v, s=style_name: _checkpoint(models, task, score, s, v), default)
        if path is not None:
            state[f"{sidebar.CKPT_KEY}_{style_name}"] = path
    st.session_state.update(state)
    cell = take("cell", _cell, None)
    if cell is None:
        st.session_state.pop(CELL_KEY, None)
    else:
        st.session_state[CELL_KEY] = cell
    asked = {"step": state[STEP_KEY]} if state[STEP_KEY] else {}
    st.session_state[LINK_ASKED] = {**asked, **({"cell": cell} if cell is not None else {})}
    return bad


def read_link(models: list[ModelEntry]) -> None:
    """At the top of the page, before its widgets: a shared link on a session's first visit, or
    the history entry Back or Forward went to, becomes the page's state."""
    query = url_to_read()
    if query is None:
        return
    bad = _read(models, query)
    task = query.get("task")
    if task and task not in model_tasks(models) and any(e.get("task") == task for e in absent_models()):
        missing = (
            f"This link's task “{escape_markdown(task)}” has no models installed here (an installed package leaves "
            "the Multi30k models out): start the app with `attnviz app --models DIR`, DIR a copy of the "
            "repository's `pretrained/`. Opened with the defaults instead."
        )
        bad = [b for b in bad if not b.startswith("task ")]
        st.session_state[_NOTE] = (" ".join([missing, *([_note(bad)] if bad else [])]), None)
        return
    st.session_state[_NOTE] = (_note(bad), None) if bad else None


MAX_NOTED = 6  # unknown parts named in the note; the rest are counted


def _note(bad: list[str]) -> str:
    verb = "is" if len(bad) == 1 else "are"
    named = ", ".join(bad[:MAX_NOTED]) + (f" and {len(bad) - MAX_NOTED} more" if len(bad) > MAX_NOTED else "")
    return f"This link's {escape_markdown(named)} {verb} not known here: opened with the defaults instead."


def stage(choice: sidebar.Choice, text: str, models: list[ModelEntry]) -> None:
    """The state on screen, staged as the URL's query (written by :func:`write` or a view's fragment)."""
    cell = st.session_state.get(CELL_KEY)
    view = st.session_state.get(VIEW_KEY)
    method = st.session_state.get(METHOD_KEY) or LINK_METHODS[0]
    if view not in (BOTH_VIEWS if choice.mode == "both" else VIEWS):
        view = None  # Difference, remembered for Both, while one style shows Weights: the link says Weights
    checkpoints = {}
    for style, entry in choice.entries.items():
        found = matches(models, choice.task, choice.score, style)
        if found and entry.path != found[0].path:
            checkpoints[style] = entry.name
    stage_url(
        {
            "task": choice.task,
            "score": choice.score,
            "style": choice.mode,
            "text": text,
            "view": view if view and view != VIEWS[0] else None,
            "step": (st.session_state.get(STEP_KEY) or None) if view == "Per step" else None,
            "cell": f"{cell[0]},{cell[1]}" if cell else None,
            "beam": choice.beam if choice.beam > 1 else None,
            "links": method if view == "Alignment" and method != LINK_METHODS[0] else None,
            **checkpoints,
            "hide_eos": "1" if choice.hide_eos else None,
            "merge": "1" if choice.merge else None,
            "format": choice.image_format if choice.image_format != FORMATS[0] else None,
        },
        replace=True,
    )


def write(note_slot: DeltaGenerator) -> None:
    """The staged state as the URL (one history entry when it changed); in ``note_slot`` (an
    ``st.empty`` near the top), the line on a link's unknown parts while the page shows that link."""
    write_url()
    kept = st.session_state.get(_NOTE)
    if not kept:
        return
    note, at = kept
    now = st.query_params.to_dict()
    if at is None or at == now:
        st.session_state[_NOTE] = (note, now)
        note_slot.info(note, icon=":material/link_off:")
    else:
        st.session_state[_NOTE] = None
