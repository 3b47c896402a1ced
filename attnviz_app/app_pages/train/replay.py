"""The Train page's replay of the alignment history: live (at the latest point) while a training
runs, then the whole animation; and retraining a model without history from its own recipe."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from attnviz.plots import replay_figure, replay_html
from attnviz.server import JobSnapshot
from attnviz.store import free_path, models_dir, slugify, visible_to
from attnviz.training import Recipe
from attnviz_app.app_pages.shared.choices import keep_choice
from attnviz_app.app_pages.shared.common import (
    escape_markdown,
    get_model,
    session_models,
    style_name,
    user_errors,
)
from attnviz_app.app_pages.shared.keys import TRAIN_RETRAIN

PROBE_KEY = "train_history_probe"


def _label(probe: dict) -> str:
    words = " ".join(probe["source_tokens"][:-1])
    return f"{words[:60]}{'…' if len(words) > 60 else ''}" + (" (gold links)" if probe.get("sure") else "")


def history_panel(snap: JobSnapshot) -> None:
    """The probes' attention as recorded so far, with the loss, AER and entropy curves."""
    history = snap.history
    if not history or not history.get("points"):
        if snap.active:
            st.caption("The alignment history starts with the first recorded point (the untrained model).")
        return
    probes = history["probes"]
    keep_choice(PROBE_KEY, range(len(probes)), lambda i: _label(probes[i]), 0)
    k = st.selectbox(
        "Replay the attention of",
        range(len(probes)),
        format_func=lambda i: _label(probes[i]),
        key=PROBE_KEY,
        persist_state="session",
    )
    chosen = {"points": history["points"], "probes": [probes[k]]}
    fig = replay_figure({snap.name: chosen})
    st.plotly_chart(fig, key="train_history_replay", width="stretch")
    n = len(history["points"])
    if snap.active:
        st.caption(
            f"Live: {n} points recorded so far (dense early, then every epoch end). When the training ends,"
            " ▶ plays the whole formation; Explore's Training view replays it later."
        )
    elif snap.result_path is None:  # failed, or stopped before anything was saved
        st.caption(
            f"{n} recorded points: ▶ plays how its attention formed. No model was saved, so the history is not"
            " kept with one: download the animation to keep it."
        )
    else:
        st.caption(
            f"{n} recorded points, saved in the model: ▶ plays how its attention formed; Explore's Training"
            " view replays it any time, beside its sibling in Both."
        )
    if not snap.active:
        st.download_button(
            "Download the animation (HTML, plays offline)",
            lambda: replay_html(fig, f"attnviz: how {snap.name}'s attention formed"),
            file_name=f"attnviz-history-{slugify(snap.name)}.html",
            mime="text/html",
            key="train_history_html",
            on_click="ignore",
            icon=":material/download:",
        )


def retrain_recipe(meta: dict, name: str) -> Recipe | None:
    """The recipe a model was trained with, under ``name`` (None when the model does not store it)."""
    full = meta.get("recipe_full")
    if not full:
        return None
    data = {k: v for k, v in dict(full).items() if k in Recipe.__dataclass_fields__}
    return Recipe(**{**data, "name": name})


def retrain_panel(sid: str, submit: Callable[[str, Recipe], None]) -> None:
    """Retrain the model Explore's Training view sent here (it has no history) with its own recipe."""
    path = st.session_state.get(TRAIN_RETRAIN)
    entry = next((m for m in session_models() if m.path == path), None) if path else None
    if entry is None:
        return
    with st.expander(
        f"Retrain {entry.name} with its own recipe (the new model records its alignment history)", expanded=True
    ):
        with user_errors():
            meta = get_model(entry).meta
        recipe = retrain_recipe(meta, entry.name) if visible_to(meta, sid) else None
        if recipe is None:
            st.info("This model does not store its recipe; use the form below with the same settings.")
            return
        saves_as = free_path(models_dir(), slugify(recipe.name)).stem
        train = recipe.train
        budget = f"{train.get('epochs', '?')} epochs" + (
            f" or {train['max_seconds'] / 60:.0f} minutes" if train.get("max_seconds") else ""
        )
        model = recipe.model
        st.caption(
            f"Data {escape_markdown(recipe.data)}, score {model.get('score')}, style {style_name(model.get('style'))}, "
            f"{budget}. Will be saved as **{escape_markdown(saves_as)}**; the original stays as it is."
        )
        left, right = st.columns(2)
        if left.button("Start the retraining", key="train_retrain_start", type="primary"):
            st.session_state.pop(TRAIN_RETRAIN, None)
            submit(sid, Recipe(**{**recipe.to_dict(), "name": saves_as}))
        if right.button("Not now", key="train_retrain_cancel"):
            st.session_state.pop(TRAIN_RETRAIN, None)
            st.rerun()
