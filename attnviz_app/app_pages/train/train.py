"""Train: pick data, a score function, a decoder and sizes; watch the alignment emerge."""

from __future__ import annotations

import time

import streamlit as st

from attnviz.data import TASKS
from attnviz.errors import AttnvizError
from attnviz.model import other_style
from attnviz.server import (
    ACTIVE,
    REGISTRY,
    discard_stranded,
    hold_for_training,
    keep_stranded,
    resume_stranded,
    stranded_runs,
)
from attnviz.store import default_model_name, sibling, task_of, visible_to
from attnviz.training import Recipe
from attnviz_app.app_pages.shared.common import (
    error_text,
    escape_markdown,
    get_model,
    refresh_models,
    session_id,
    session_models,
    style_name,
    user_errors,
)
from attnviz_app.app_pages.shared.data_ui import pick_data, select_task
from attnviz_app.app_pages.shared.keys import TRAIN_SIBLING, TRAIN_WANTED
from attnviz_app.app_pages.train.form import (
    SCORE_KEY,
    STYLE_KEY,
    STYLES,
    cap_note,
    progress_panel,
    recipe_form,
    session_alive,
    sibling_recipe,
)
from attnviz_app.app_pages.train.replay import retrain_panel

WANTED_NOTE = "train_wanted_note"  # (score, line): what Explore's "Train it" set the form to


def submit(sid: str, recipe: Recipe) -> None:
    try:
        job = REGISTRY.submit(sid, recipe, is_alive=session_alive(sid))
    except AttnvizError as e:
        st.error(error_text(e))  # it quotes the typed model name
    else:
        # the upload it reads stays until the training ends, whatever this session does meanwhile
        hold_for_training(recipe.data, job.out.stem, lambda: job.status in ACTIVE)
        st.rerun()


def sibling_panel(sid: str) -> None:
    """Train a shown model's missing other-style sibling from the model's own recipe."""
    models = session_models()
    wanted = st.session_state.get(TRAIN_SIBLING)
    options = []
    for m in models:
        other = other_style(m.style)
        if m.owner in (None, sid) and sibling(models, m, other) is None:
            options.append((m.path, other))
    if not options:
        return
    labels = {o: f"{next(m.name for m in models if m.path == o[0])} → its {style_name(o[1])} sibling" for o in options}
    index = options.index(tuple(wanted)) if wanted and tuple(wanted) in options else 0
    with st.expander(
        "Train a missing sibling (same data, sizes and settings, the other decoder style)", expanded=wanted is not None
    ):
        pick = st.selectbox("Model", options, index=index, format_func=labels.get, key="train_sibling_pick")
        entry = next(m for m in models if m.path == pick[0])
        with user_errors():
            meta = get_model(entry).meta
        if not visible_to(meta, sid):
            st.info("This model was trained on another session's upload; its settings are private.")
            return
        name = default_model_name(task_of(entry), str(entry.score), pick[1])
        recipe = sibling_recipe(meta, pick[1], name)
        if recipe is None:
            st.info("This model does not store its recipe; use the form below with the same settings.")
            return
        train = recipe.train
        budget = f"{train.get('epochs', '?')} epochs" + (
            f" or {train['max_seconds'] / 60:.0f} minutes" if train.get("max_seconds") else ""
        )
        st.caption(f"Data {escape_markdown(recipe.data)}, score {entry.score}, style {style_name(pick[1])}, {budget}.")
        if st.button(f"Start training the {style_name(pick[1])} model", key="train_sibling_start", type="primary"):
            st.session_state.pop(TRAIN_SIBLING, None)
            submit(sid, recipe)


def wanted_note() -> None:
    """Explore's "Train it" for a score no model of the task has: the data, the score function and the
    decoder style set once, and a line above the form that says so while that score is chosen."""
    wanted = st.session_state.pop(TRAIN_WANTED, None)
    if wanted is not None:
        task, score, style = wanted
        named, shown = select_task("train", task), escape_markdown(task)
        data = "the data" if named else f"choose {shown}'s data in the sidebar; the rest"
        st.session_state[SCORE_KEY], st.session_state[STYLE_KEY] = score, style
        st.session_state[WANTED_NOTE] = (
            score,
            (
                f"No model of {shown} has the score function {escape_markdown(score)} yet: {data} of the form below "
                f"is set to train one ({STYLES[style].split(' (')[0]} decoder). Press **Start training** at the bottom."
            ),
        )
    note = st.session_state.get(WANTED_NOTE)
    if note and st.session_state.get(SCORE_KEY) == note[0]:
        st.info(note[1], icon=":material/model_training:")


def leaving_note(sid: str) -> None:
    """A training whose page went away (a reload) stops at its last finished epoch before it waits in
    :func:`stranded_panel`: say so, and look again every second until it is there."""

    def leaving() -> int:
        return sum(job.leaving() and job.owner in (None, sid) for job in REGISTRY.active())

    if not leaving():
        return

    @st.fragment(run_every=1.0)
    def note() -> None:
        if not leaving():
            st.rerun(scope="app")  # it waits below now, with Keep, Resume and Discard
        st.info(
            "A training whose page went away (a reload or a closed tab) is stopping at its last finished epoch; "
            "it will be listed here in a moment, to keep, resume or discard.",
            icon=":material/hourglass_top:",
        )

    note()


def stranded_panel(sid: str) -> None:
    """Trainings a stopped or killed server, or a page left mid-run, left unfinished: keep, resume or discard each."""
    runs = stranded_runs(viewer=sid)
    if not runs:
        return
    title = f"{len(runs)} unfinished training(s): the server stopped or the page was left before the end"
    with st.expander(title, expanded=True):
        for run in runs:
            left, b1, b2, b3 = st.columns([4, 1, 1, 1], vertical_alignment="center")
            left.markdown(f"**{escape_markdown(run.name)}**: {run.epochs_done} of {run.epochs or '?'} epochs done")
            if b1.button("Keep as is", key=f"train_keep_{run.name}", help="Move it into the models folder"):
                with user_errors():
                    keep_stranded(run.name)
                refresh_models()
                st.rerun()
            if b2.button("Resume", key=f"train_resume_{run.name}", disabled=run.recipe is None):
                with user_errors():
                    recipe = resume_stranded(run.name)
                    REGISTRY.submit(sid, recipe, is_alive=session_alive(sid), resume=run.name)
                st.rerun()
            # everyone using this server sees the runs of built-in and Multi30k data, as the models folder: a
            # discard, which cannot be undone, asks once more and says when the run was last saved
            with b3.popover("Discard", key=f"train_discard_ask_{run.name}"):
                ago = max(0, int(time.time() - run.modified) // 60)
                st.markdown(
                    f"Delete **{escape_markdown(run.name)}** and its {run.epochs_done} finished epoch(s)? It was last"
                    f" saved {ago} minute(s) ago; whoever started it, here or in another browser, loses it too."
                )
                if st.button("Discard for good", key=f"train_discard_{run.name}", type="primary"):
                    with user_errors():
                        discard_stranded(run.name)
                    st.rerun()


st.title("Train a model")
st.caption(
    "Training runs in the background, one run per browser session and a few per server; the app stays "
    "responsive for other users. The finished model is saved to the models folder and appears on every page."
)
sid = session_id()
job = REGISTRY.get(sid)
if job is not None:
    progress_panel(job)
    if job.snapshot().active:
        st.stop()
    st.divider()

leaving_note(sid)
stranded_panel(sid)
retrain_panel(sid, submit)
sibling_panel(sid)
wanted_note()
with st.sidebar:
    picked = pick_data("train")
if picked is None:
    st.info("Choose the data in the sidebar; if a file cannot be read, the sidebar says why.")
    st.stop()
spec, label = picked
cap_note()
recipe = recipe_form(spec, label if spec in TASKS else "custom", builtin=spec in TASKS)
if recipe is not None:
    submit(sid, recipe)
