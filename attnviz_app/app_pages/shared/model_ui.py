"""Model helpers shared by the Compare, Evaluate and Learn pages: default choices, test pairs."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from attnviz.data import Pair
from attnviz.decoding import Translator
from attnviz.errors import AttnvizError
from attnviz.evaluation import measured_on
from attnviz.store import ModelEntry, name_part, shareable_meta
from attnviz_app.app_pages.shared.common import error_text, session_id, style_name
from attnviz_app.app_pages.shared.data_ui import cached_corpus
from attnviz_app.app_pages.shared.keys import EXPLORE_MODELS

PREFERRED = (("additive", "bahdanau"), ("general", "luong"), ("dot", "luong"))
# A picker's chips (Streamlit 1.67's ``span[data-tag]``, its text in the inner span) show whole
# names, wrapped after a dash, where Streamlit cuts them to one line with an ellipsis: the end
# of ``…-additive-luong-guided`` is what tells it from its plain twin. The box grows to hold
# them all rather than scrolling them out of sight.
WHOLE_CHIPS = """<style>
[data-testid="stMultiSelect"] .react-aria-ComboBox > [role="group"] { max-height: none; }
[data-testid="stMultiSelect"] [data-tag] { height: auto; max-width: 100%; }
[data-testid="stMultiSelect"] [data-tag] > span { white-space: normal; overflow: visible; text-overflow: clip;
  overflow-wrap: anywhere; line-height: 1.3; padding: 2px 0; }
</style>"""


def default_models(models: list[ModelEntry]) -> list[ModelEntry]:
    """Additive/Bahdanau vs general/Luong vs dot/Luong of the task that has most of them; else two models."""
    best: list[ModelEntry] = []
    for task in dict.fromkeys(m.task for m in models):
        found = []
        for score, style in PREFERRED:
            match = next((m for m in models if m.task == task and (m.score, m.style) == (score, style)), None)
            if match:
                found.append(match)
        if len(found) > len(best):
            best = found
    if len(best) >= 2:
        return best
    same_task = [m for m in models if m.task == models[0].task]
    return (same_task if len(same_task) >= 2 else models)[:2]


def model_meta(translator: Translator) -> dict:
    """The translator's meta as this session may see it (attnviz.store.catalog.shareable_meta): a model
    another session trained on its upload keeps its example sentence and data to itself."""
    return shareable_meta(translator.meta, session_id())


def test_pairs(meta: dict, limit: int | None = None) -> list[Pair]:
    """The test split a model is measured on (attnviz.evaluation.evaluate.measured_on), loaded once;
    none, with a note saying why, when the model's data cannot be read back (a file outside the
    models and uploads folders, another session's upload): the rest of the page still works."""
    try:
        spec, options = measured_on(meta)
        corpus = cached_corpus(spec, **options, split="test")  # Multi30k reads its test files alone
    except AttnvizError as e:  # no data named, or not on this machine (a Multi30k folder elsewhere, a file gone)
        st.caption(f"No test pairs for this model: {error_text(e)}")
        return []
    return corpus.test[:limit] if limit else corpus.test


def opened_in_explore(models: list[ModelEntry]) -> list[ModelEntry]:
    """The models open in Explore (both styles in Both), plus, when that is one model, the other
    models of its task with the same score, else of its task: at least two to compare."""
    names = st.session_state.get(EXPLORE_MODELS) or []
    chosen = [m for m in models if m.name in names]
    if not chosen:
        return []
    if len(chosen) == 1:
        first = chosen[0]
        same_task = [m for m in models if m.task == first.task and m is not first]
        same_task.sort(key=lambda m: m.score != first.score)
        chosen += same_task[:1]
    return chosen


def follow_explore(key: str, explored: object, default: Callable[[], object]) -> None:
    """Set the page's choice ``key`` to ``default()`` when it has none yet or when Explore shows
    something else (``explored``: its models or sentence) than at this page's last run. Explore's first
    run, which only puts its defaults where nothing was, is no change: a choice made on this page before
    any visit to Explore stays."""
    before = st.session_state.get(f"{key}__from")
    if key not in st.session_state or (bool(before) and before != explored):
        st.session_state[key] = default()
    st.session_state[f"{key}__from"] = explored


def pick_models(models: list[ModelEntry], key: str, label: str = "Models") -> list[ModelEntry]:
    """A multiselect of models by name, its chips showing whole names; defaults to Explore's models, else
    :func:`default_models`."""
    by_name = {m.name: m for m in models}
    explored = tuple(st.session_state.get(EXPLORE_MODELS) or ())
    follow_explore(key, explored, lambda: [m.name for m in (opened_in_explore(models) or default_models(models))])
    st.session_state[key] = [n for n in st.session_state[key] if n in by_name]
    st.html(WHOLE_CHIPS)
    names = st.multiselect(
        label,
        list(by_name),
        key=key,
        persist_state="session",
        format_func=lambda n: chip_label(by_name[n]),
        filter_mode="contains",  # a typed name is not also every name it is a subsequence of
        select_all=False,  # Enter on a typed name picks that model, not every match
    )
    return [by_name[n] for n in names]


def chip_label(entry: ModelEntry) -> str:
    """A model in a picker: its name, with its score and style where the name does not say them."""
    name, score, style = entry.name, str(entry.score), str(entry.style)
    parts = name.lower().split("-")
    said = name_part(score) in name.lower() and name_part(style) in parts
    return name if said else f"{name} · {score}/{style_name(style)}"
