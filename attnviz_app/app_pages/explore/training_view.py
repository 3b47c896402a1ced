"""Explore's Training view: replay how the shown model's attention formed while it trained (its
alignment history), or in Both the two styles' histories side by side on one axis of progress."""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from attnviz.plots import REPLAY_MIN_PX, plot_config, replay_figure, replay_html
from attnviz.store import ModelEntry, file_stem, models_slug, read_history, visible_to
from attnviz_app import page_file
from attnviz_app.app_pages.explore.screen import page_width
from attnviz_app.app_pages.shared.choices import keep_choice
from attnviz_app.app_pages.shared.common import escape_markdown, get_model, model_version, session_id, user_errors
from attnviz_app.app_pages.shared.keys import TRAIN_RETRAIN

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from attnviz.data import Tokenizer

AXIS_KEY, PROBE_KEY = "explore_history_axis", "explore_history_probe"
AXES = {"step": "Optimiser steps", "epochs": "Epochs"}
CAPTION = (
    "Each frame is the probe's attention at a recorded point of the training (forced through its reference, so"
    " the grid never changes): dense early, where alignments form, then at every epoch end. Weights share one"
    " 0..1 colour scale; red squares are the gold links where the task has them, and AER scores the argmax of"
    " each row against them. ▶ plays from the untrained model; drag the slider to scrub."
)


@st.cache_data(max_entries=32, show_spinner=False)
def stored_history(path: str, mtime: float) -> dict | None:
    """A checkpoint's alignment history as plain data (cached per file version)."""
    return read_history(path)


def _retrain(path: str) -> None:
    st.session_state[TRAIN_RETRAIN] = path


def _without_history(name: str, entry: ModelEntry) -> None:
    """Say that a model has no history and offer to retrain it from its own recipe."""
    meta = get_model(entry).meta
    left, right = st.columns([4, 1], vertical_alignment="center")
    text = (
        f"**{escape_markdown(name)}** ({escape_markdown(entry.name)}) was trained without an alignment "
        "history, so there is nothing to replay."
    )
    if meta.get("recipe_full") and visible_to(meta, session_id()):
        left.info(text + " Retrain it with its own recipe: the new model records one.", icon=":material/history:")
        if right.button("Retrain it", key=f"explore_retrain_{name}", on_click=_retrain, args=(entry.path,)):
            st.switch_page(page_file("train/train.py"))
    else:
        left.info(
            text + " It does not store its recipe: train one with the same settings on the Train page; every"
            " new training records its history.",
            icon=":material/history:",
        )


def training_view(entries: dict[str, ModelEntry], image_format: str) -> None:
    """The replay of every shown model that has a history (one figure, one shared axis)."""
    histories, sid = {}, session_id()
    for name, entry in entries.items():
        with user_errors():
            history = stored_history(*model_version(entry))
            if history is not None and not visible_to(get_model(entry).meta, sid):
                st.info(
                    f"**{escape_markdown(name)}** was trained on another session's upload; its training "
                    "history quotes that data and stays private."
                )
                continue
        if history is None:
            _without_history(name, entry)
        elif not history["points"]:
            st.info(f"**{escape_markdown(name)}**: its history has no recorded point yet.")
        else:
            histories[name] = history
    if not histories:
        return
    first = next(iter(histories.values()))
    probes = first["probes"]
    if len(histories) > 1 and any(h["probes"] != probes for h in histories.values()):
        probes = [p for p in probes if all(_same_probe(p, q) for q in _others(p, histories))]
        if not probes:
            st.info("The two models recorded different probe sentences; each is replayed on its own.")
            for name, history in histories.items():
                _replay({name: history}, history["probes"], image_format, entries)
            return
    _replay(histories, probes, image_format, entries)


def _same_probe(a: dict, b: dict | None) -> bool:
    return b is not None and (a["source_tokens"], a["target_tokens"]) == (b["source_tokens"], b["target_tokens"])


def _others(probe: dict, histories: dict[str, dict]) -> list[dict | None]:
    """The probe with the same tokens in each history (None where a history lacks it)."""
    return [next((q for q in h["probes"] if _same_probe(probe, q)), None) for h in histories.values()]


def _probe_label(probe: dict, tokenizer: Tokenizer) -> str:
    """What the Probe box shows: the kind first (a long sentence is cut at the box's edge), then the
    source as text (pieces joined, punctuation reattached)."""
    text = tokenizer.detokenize(probe["source_tokens"][:-1])
    gold = " with gold links" if probe.get("sure") else ""
    kind = "Probe sentence" if probe["role"] == "probe" else f"Test pair{gold}"
    return f"{kind}: {text[:70]}{'…' if len(text) > 70 else ''}"


def _replay(histories: dict[str, dict], probes: list[dict], image_format: str, entries: dict[str, ModelEntry]) -> None:
    left, right = st.columns([3, 2], vertical_alignment="bottom")
    tokenizer = get_model(entries[next(iter(histories))]).src_tokenizer  # the probes' tokens, read back as text

    def label(k: int) -> str:
        return _probe_label(probes[k], tokenizer)

    keep_choice(PROBE_KEY, range(len(probes)), label, 0)
    probe = left.selectbox(
        "Probe",
        range(len(probes)),
        format_func=label,
        key=PROBE_KEY,
        persist_state="session",
    )
    axis = right.radio(
        "Axis of progress",
        list(AXES),
        format_func=AXES.get,
        key=AXIS_KEY,
        horizontal=True,
        persist_state="session",
        help="Steps: optimiser updates; epochs: passes over the training data (fractional between "
        "epoch ends). In Both, the two models are placed on the same axis.",
    )
    chosen = {name: _with_probe(h, probes[probe]) for name, h in histories.items()}
    stacked = len(chosen) > 1 and page_width() < REPLAY_MIN_PX  # Both in a column too narrow for two maps
    versions = tuple((name, *model_version(entries[name])) for name in histories)
    tokens = (tuple(probes[probe]["source_tokens"]), tuple(probes[probe]["target_tokens"]))
    with user_errors():
        shown = _figures(versions, tokens, axis, stacked)
    models = [entries[name].name for name in histories]  # the files are named after the models, the probe, the axis
    text = tokenizer.detokenize(probes[probe]["source_tokens"][:-1])
    stem = f"attnviz-history-{file_stem(models_slug(models) or 'model', text, f'by-{axis}')}"
    for k, figure in enumerate(shown):
        st.plotly_chart(
            figure,
            key=f"explore_history_{'-'.join(histories)}" + (f"_{k}" if stacked else ""),
            width="stretch",
            config=plot_config(stem, image_format),
        )
    if stacked:
        st.caption("The column is too narrow for the two replays side by side: one under the other, each its ▶.")
    st.caption(CAPTION)
    _table(chosen)
    title = f"attnviz: how attention formed ({', '.join(models)}) on “{text}”, by {AXES[axis].lower()}"
    st.download_button(
        "Download the animation (HTML, plays offline)",
        lambda: replay_html(replay_figure(chosen, probe=0, axis=axis) if stacked else shown[0], title),  # one axis
        file_name=f"{stem}.html",
        mime="text/html",
        key="explore_history_html",
        on_click="ignore",
        icon=":material/download:",
    )


@st.cache_resource(max_entries=8, show_spinner=False)
def _figures(
    versions: tuple[tuple[str, str, float], ...],
    probe: tuple[tuple[str, ...], tuple[str, ...]],
    axis: str,
    stacked: bool,
) -> list[go.Figure]:
    """The replay figures of the shown models' histories (panel name, file, version) on the probe with these
    source and target tokens: built once per file version, probe, axis and layout (a figure of every frame
    takes seconds), one figure, or one a model when ``stacked``. Streamlit draws them without changing them."""
    wanted = {"source_tokens": list(probe[0]), "target_tokens": list(probe[1])}
    chosen = {name: _with_probe(stored_history(path, mtime), wanted) for name, path, mtime in versions}
    parts = [{name: h} for name, h in chosen.items()] if stacked else [chosen]
    return [replay_figure(part, probe=0, axis=axis) for part in parts]


def _with_probe(history: dict, probe: dict) -> dict:
    """``history`` with only ``probe`` (matched by its tokens) as its probe list."""
    found = next(p for p in history["probes"] if _same_probe(probe, p))
    return {"points": history["points"], "probes": [found]}


def _table(histories: dict[str, dict]) -> None:
    """When the AER first fell below 0.5 and where it ended, per model."""
    rows = []
    for name, history in histories.items():
        points = history["points"]
        if not any(p.get("aer") is not None for p in points):
            continue
        below = next((p for p in points if p.get("aer") is not None and p["aer"] < 0.5), None)
        last = points[-1]
        rows.append(
            {
                "model": name,
                # text, so that a model whose AER never fell that low reads "never", not None
                "AER < 0.5 first at": f"step {below['step']:,}, epoch {below['epochs']:.2f}" if below else "never",
                "last AER": last.get("aer"),
                "last entropy": last.get("entropy"),
                "points": len(points),
            }
        )
    if rows:
        st.dataframe(
            rows,
            hide_index=True,
            key="explore_history_table",
            column_config={
                "last AER": st.column_config.NumberColumn(format="%.3f"),
                "last entropy": st.column_config.NumberColumn(format="%.3f"),
            },
        )
