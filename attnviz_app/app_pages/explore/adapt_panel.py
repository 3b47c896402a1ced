"""Explore's Alignment view, adapted: a private copy of a shown model fine-tuned on a bitext in the
background (attnviz.server.AdaptJob), its links scored beside the plain model's and its maps a toggle
away. The copy stays in this session's memory; Save writes it into the models folder under a free name.

Hooks: :func:`adapt_section` in the scored view (attnviz_app/app_pages/explore/gold.py) draws the expander and gives
the copy's rows of the scores table; :func:`adapted_maps` gives the maps' toggle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import streamlit as st

from attnviz.decoding import Translator
from attnviz.errors import AttnvizError, counted
from attnviz.links import MAX_FILE_BYTES, CorpusAlignment, GoldSet, Reading, align_corpus, word_attention
from attnviz.server import ADAPTATIONS, AdaptJob, save_adapted, upload_bitext
from attnviz.store import ModelEntry
from attnviz.training import AdaptConfig
from attnviz_app.app_pages.explore.links import Method, Version, Words
from attnviz_app.app_pages.shared.choices import keep_choice
from attnviz_app.app_pages.shared.common import (
    error_text,
    escape_markdown,
    get_model,
    model_version,
    refresh_models,
    session_id,
)
from attnviz_app.app_pages.shared.uploads import session_holder

if TYPE_CHECKING:
    from streamlit.delta_generator import DeltaGenerator

HELD = "explore_adapt_held"  # session state: this session's Held adaptation (running or ended)
SAVED = "explore_adapt_saved"  # session state: job id -> the file it was saved as
SCORED = "explore_adapt_scored"  # session state, this run: (job id, the panels whose copy has a row in the scores)
OPEN_KEY, MODEL_KEY, ON_KEY = "explore_adapt_open", "explore_adapt_model", "explore_adapt_on"
FILE_KEY, TGT_FILE_KEY = "explore_adapt_file", "explore_adapt_tgt_file"
STEPS_KEY, GUIDED_KEY, START_KEY = "explore_adapt_steps", "explore_adapt_guided", "explore_adapt_start"
CANCEL_KEY, NAME_KEY, SAVE_KEY = "explore_adapt_cancel", "explore_adapt_name", "explore_adapt_save"
DROP_KEY, MAPS_KEY = "explore_adapt_drop", "explore_adapt_maps"
APP_MAX_STEPS = 2000  # more is a job for `attnviz align-eval --adapt N`
GUIDED_HELP = (
    "Add the guided alignment loss against eflomal's links of the same bitext (computed first, a few seconds "
    "more). Never the gold links: they only score the result."
)


class Held(NamedTuple):
    """This session's adaptation: the job, the model's name, whether the bitext was an upload (a saved copy
    is then private to this session, as a model trained on an upload is)."""

    job: AdaptJob
    model_name: str
    private: bool


class AdaptedMap(NamedTuple):
    """A finished copy of a shown model, for the maps: its row's label and the copy."""

    label: str
    job_id: str
    model: Translator

    def reading(self, source: list[str], target: list[str]) -> Reading:
        return _reading(self.job_id, tuple(source), tuple(target), self.model)


@st.cache_data(max_entries=16, show_spinner=False)
def _corpus_links(
    job_id: str,
    method: Method,
    adapted_from: Version,
    sources: tuple[Words, ...],
    targets: tuple[Words, ...],
    _model: Translator,
) -> CorpusAlignment:
    """The adapted copy's links of every pair (keyed by the job's id: the copy is in no file); the
    symmetric methods read the reverse of the model it was adapted from."""
    reverse = method.reverse_of(adapted_from)
    pairs = [list(s) for s in sources], [list(t) for t in targets]
    return align_corpus(_model, *pairs, method.name, reverse, method.threshold)


@st.cache_data(max_entries=64, show_spinner=False)
def _reading(job_id: str, source: Words, target: Words, _model: Translator) -> Reading:
    return word_attention(_model, list(source), list(target))


def _done(entries: dict[str, ModelEntry]) -> tuple[Held, list[str]] | None:
    """This session's finished copy and the panels that show the model it was made from."""
    held = st.session_state.get(HELD)
    if held is None or held.job.snapshot().status != "done":
        return None
    panels = [name for name, entry in entries.items() if model_version(entry) == held.job.model]
    return held, panels


def _row(held: Held, label: str) -> str:
    """The copy's row of the scores (and its maps' title): ``adapted 200 steps: attention (argmax)``; it must not
    start with the model's own label, which names that row's per-sentence columns."""
    return f"{held.job.label}: {label}"


def adapt_section(
    entries: dict[str, ModelEntry], labels: dict[str, str], method: Method, gold: GoldSet
) -> dict[str, list]:
    """The expander "Adapt the model to this text"; then, once a copy of a shown model is adapted,
    its links of the gold pairs by row label (``adapted N steps: attention (argmax)``)."""
    held = st.session_state.get(HELD)
    running = held is not None and held.job.snapshot().active  # back from another page: its progress in sight
    with st.expander("Adapt the model to this text", expanded=running, key=OPEN_KEY):
        _panel(entries, gold)
    st.session_state[SCORED] = None  # the job may end between the scores and the maps: the maps follow the scores
    done = _done(entries)
    if done is None:
        return {}
    (held, panels), rows = done, {}
    sources, targets = tuple(map(tuple, gold.sources)), tuple(map(tuple, gold.targets))
    for name in panels:
        try:
            with st.spinner(f"Aligning {len(sources)} pairs with the adapted copy…"):
                aligned = _corpus_links(held.job.id, method, held.job.model, sources, targets, held.job.result)
        except AttnvizError as e:
            st.error(error_text(e))
            continue
        rows[_row(held, labels[name])] = aligned.links
    st.session_state[SCORED] = held.job.id, [name for name in panels if _row(held, labels[name]) in rows]
    return rows


def adapted_maps(labels: dict[str, str], where: DeltaGenerator) -> dict[str, AdaptedMap]:
    """The toggle between the plain model's maps and the adapted copy's (in ``where``), shown once
    :func:`adapt_section` scored a copy of a shown model in this run; the panels whose maps read the copy."""
    held = st.session_state.get(HELD)
    scored = st.session_state.get(SCORED)
    if held is None or not scored or scored[0] != held.job.id or not scored[1]:
        return {}
    panels = scored[1]
    names = {"plain": "the model", "adapted": held.job.label}
    if st.session_state.get(MAPS_KEY) not in names:
        st.session_state[MAPS_KEY] = "adapted"
    shown = (
        where.segmented_control(
            "Attention of", list(names), format_func=names.get, key=MAPS_KEY, persist_state="session"
        )
        or "plain"
    )
    if shown == "plain":
        return {}
    return {name: AdaptedMap(_row(held, labels[name]), held.job.id, held.job.result) for name in panels}


def _bitext(gold: GoldSet) -> tuple[list[list[str]], list[list[str]], str, bool] | None:
    """The pairs to adapt on, what they are and whether they came from an upload; None (with a note or an
    error) until an uploaded bitext can be read."""
    kinds = {"pairs": f"The {len(gold.sources)} pairs scored here", "upload": "A bitext of its own"}
    keep_choice(ON_KEY, list(kinds), kinds.get, "pairs")  # the first label follows the gold set
    kind = st.radio(
        "Adapt on", list(kinds), format_func=kinds.get, key=ON_KEY, horizontal=True, persist_state="session"
    )
    if kind == "pairs":
        return gold.sources, gold.targets, gold.origin, bool(gold.convention)  # a convention: read from a file
    left, right = st.columns(2)
    size = MAX_FILE_BYTES // 2**20
    label, why = (
        "Sentences: source, or a `source ||| target` bitext",
        "A bitext: one `source ||| target` pair per line; or source sentences, one per line, with a target file. "
        "Words separated by spaces.",
    )
    first = left.file_uploader(label, key=FILE_KEY, max_upload_size=size, help=why)
    second = right.file_uploader("Target sentences (not with a bitext)", key=TGT_FILE_KEY, max_upload_size=size)
    if first is None:
        st.info(
            "Upload a `source ||| target` bitext, or source and target sentence files, to adapt on: at most "
            f"{size} MB each (the uploader refuses a larger file, marked in red: adapt on a part of it)."
        )
        return None
    try:
        second_data = second.getvalue() if second is not None else None
        sources, targets = upload_bitext(first.getvalue(), first.name, second_data, second.name if second else None)
    except AttnvizError as e:
        st.error(error_text(e))
        return None
    # named, as a refused upload leaves the file before it in use
    files = f"{first.name} and {second.name}" if second is not None else first.name
    st.caption(escape_markdown(f"Adapts on {files}: {counted(len(sources), 'pair')}."))
    return sources, targets, first.name, True


def _panel(entries: dict[str, ModelEntry], gold: GoldSet) -> None:
    """Pick the bitext, steps and guidance; start, watch, cancel; then save or discard the copy."""
    names = list(entries)
    name = st.selectbox("Model", names, key=MODEL_KEY, persist_state="session") if len(names) > 1 else names[0]
    entry = entries[name]
    how = (
        f"Fine-tunes a copy of {entry.name} on a bitext with the translation loss (learning rate 5e-4, 32 pairs "
        "a step), in the background. The copy stays in this session until you save it; the model and its file "
        "are never changed."
    )
    st.caption(escape_markdown(how))
    bitext = _bitext(gold)
    left, middle, right = st.columns([1, 2, 1], vertical_alignment="bottom")
    steps = left.number_input(
        "Steps", 1, APP_MAX_STEPS, 200, key=STEPS_KEY, persist_state="session", help="Optimiser steps of 32 pairs"
    )
    guided = middle.checkbox(
        "Guided by eflomal's links of the same bitext", key=GUIDED_KEY, persist_state="session", help=GUIDED_HELP
    )
    held = st.session_state.get(HELD)
    running = held is not None and held.job.snapshot().active
    clicked = right.button("Adapt", key=START_KEY, type="primary", disabled=bitext is None or running)
    if clicked and bitext and not running and _start(entry, bitext, int(steps), guided):
        st.rerun()  # Adapt disabled and the progress bar's timer on
    if held is not None:
        _progress(held)
        _outcome(held, entries)


def _start(entry: ModelEntry, bitext: tuple, steps: int, guided: bool) -> bool:
    """Start adapting a copy of ``entry``'s model, replacing this session's last copy; False (with the
    reason shown) when it cannot start."""
    sources, targets, origin, private = bitext
    sid = session_id()
    try:
        cfg = AdaptConfig(steps=steps, guided=guided)
        model = get_model(entry)
        job = ADAPTATIONS.start(model, sources, targets, cfg, model_version(entry), origin, session_holder(sid))
    except AttnvizError as e:
        st.error(error_text(e))
        return False
    st.session_state[HELD] = Held(job, entry.name, private)
    return True


def _progress(held: Held) -> None:
    """A progress bar redrawn every half second while the job runs (and only then: an idle timer reruns
    every tab), with Cancel; the page reruns when the job ends, to add the copy's row."""
    running = held.job.snapshot().active

    @st.fragment(run_every=0.5 if running else None)
    def bar() -> None:
        snap = held.job.snapshot()
        if snap.active:
            if snap.step:
                text = f"Adapting: step {snap.step}/{snap.total_steps} · loss {snap.loss:.3f} · {snap.seconds:.0f} s"
            elif held.job.cfg.guided:
                text = "Adapting: eflomal aligns the bitext first…"
            else:
                text = "Adapting: starting…"
            bar_col, cancel_col = st.columns([5, 1], vertical_alignment="bottom")
            bar_col.progress(snap.fraction, text=text)
            if cancel_col.button("Cancel", key=CANCEL_KEY, help="Stop and drop the partly adapted copy"):
                held.job.cancel()
        elif running:
            st.rerun(scope="app")  # the timer off, the copy's row in the table

    bar()


def _outcome(held: Held, entries: dict[str, ModelEntry]) -> None:
    """How the job ended; for a finished copy what it was made from, Save and Discard."""
    snap = held.job.snapshot()
    if snap.status == "cancelled":
        st.warning("Adaptation cancelled; the partly adapted copy was dropped.")
    elif snap.status == "failed":
        st.error(f"Adaptation failed: {error_text(Exception(snap.error))}")
    if snap.status != "done":
        return
    info = held.job.result.meta["adapted"]
    left = f" ({info['left_out']} left out: empty or too long for the model)" if info["left_out"] else ""
    guided = ", guided by eflomal's links of the same bitext" if info["guided"] else ""
    what = (
        f"Adapted a copy of {held.model_name} for {info['steps_run']} steps on {info['pairs']} pairs from "
        f"{held.job.origin}{left}{guided} in {snap.seconds:.0f} s. {held.model_name} and its file are unchanged."
    )
    st.success(escape_markdown(what))
    if _done(entries)[1]:
        st.caption("The scores add the copy's row; 'Attention of' above the maps switches them to the copy.")
    else:
        st.info(escape_markdown(f"The adapted copy is of {held.model_name}: show that model to read its links."))
    saved = st.session_state.get(SAVED, {}).get(held.job.id)
    if saved:
        private = (
            " (private to this tab, as it learnt from an uploaded text: a reload or another tab no longer lists "
            "it; Share it under Your own checkpoint to keep it for every session)"
            if held.private
            else ""
        )
        st.success(escape_markdown(f"Saved as {saved} in the models folder{private}."))
        return
    name_col, save_col, drop_col = st.columns([3, 1, 1], vertical_alignment="bottom")
    name = name_col.text_input(
        "Save as", f"{held.model_name}-adapted", max_chars=60, key=NAME_KEY, persist_state="session"
    )
    if save_col.button("Save", key=SAVE_KEY, help="Write the copy into the models folder under a new name"):
        try:
            path = save_adapted(held.job.result, name, owner=session_id() if held.private else None)
        except AttnvizError as e:
            st.error(error_text(e))
        else:
            st.session_state.setdefault(SAVED, {})[held.job.id] = path.name
            refresh_models()
            st.rerun()  # the model lists name the saved file
    if drop_col.button("Discard", key=DROP_KEY, help="Drop the adapted copy from this session"):
        del st.session_state[HELD]
        st.rerun()
