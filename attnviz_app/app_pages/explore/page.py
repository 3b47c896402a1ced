"""Explore's page: pick a model, type a sentence, see and touch its attention; flip Bahdanau ↔ Luong.

explore.py runs :func:`render` once the library is loaded."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from attnviz.data import LEXICON
from attnviz.links import eos_share, for_reading
from attnviz.model import other_style
from attnviz.store import ModelEntry, file_stem, front_example, guided_twin, models_slug, slots
from attnviz_app import page_file
from attnviz_app.app_pages.explore import front, sidebar, url
from attnviz_app.app_pages.explore.alignment import alignment_view
from attnviz_app.app_pages.explore.attribution import attribution_view
from attnviz_app.app_pages.explore.captions import eos_note
from attnviz_app.app_pages.explore.tools import beam_view, export_view
from attnviz_app.app_pages.explore.training_view import training_view
from attnviz_app.app_pages.explore.url import BOTH_VIEWS, VIEWS
from attnviz_app.app_pages.explore.views import (
    DIFFERENCE,
    FILE_STEMS_KEY,
    context_view,
    difference_view,
    heatmap_view,
    step_view,
)
from attnviz_app.app_pages.explore.whatif import whatif_view
from attnviz_app.app_pages.shared.common import (
    escape_markdown,
    get_model,
    model_version,
    quoted,
    require_models,
    style_name,
    translate,
    user_errors,
)
from attnviz_app.app_pages.shared.keys import EXPLORE_MODELS, EXPLORE_TEXT, EXPLORE_VIEW, TRAIN_SIBLING, TRAIN_WANTED

if TYPE_CHECKING:
    from streamlit.delta_generator import DeltaGenerator

    from attnviz.decoding import Alignment

NAMES = {"bahdanau": "Bahdanau", "luong": "Luong"}


def _translation_line(name: str, entry: ModelEntry, al: Alignment) -> None:
    translation = get_model(entry).text_of(al) or "(empty)"
    line = f"**{escape_markdown(name)}** · {escape_markdown(entry.name)}: {escape_markdown(translation)}"
    st.markdown(line)
    front.record("lines", line)
    copies = al.unk_copies()
    if copies:
        front.stop_recording()
        copied = ", ".join(f"step {t + 1} → {quoted(al.source_word(s))}" for t, s in copies.items())
        st.caption(f"`<unk>` (outside the vocabulary) replaced by the source word attended most: {copied}.")


def _lexicon() -> None:
    """toy-fr's vocabulary, sent to the browser only when the expander is opened."""
    lexicon = st.expander(front.LEXICON_LABEL, key=front.LEXICON_KEY, on_change="rerun")
    front.record("lexicon", True)
    if lexicon.open:
        front.stop_recording()  # the record holds the expander closed
        with lexicon:
            st.caption("toy-fr is a small English → French-like language; these are its words (plurals included).")
            st.dataframe(pd.DataFrame(LEXICON), hide_index=True, key="explore_lexicon")


def _by_panel(choice: sidebar.Choice) -> dict[str, ModelEntry]:
    """Each shown panel's catalog entry, by panel name."""
    return {NAMES[style]: entry for style, entry in choice.entries.items()}


def _train_sibling(path: str, style: str) -> None:
    st.session_state[TRAIN_SIBLING] = (path, style)


def _train_new(task: str, score: str, style: str) -> None:
    st.session_state[TRAIN_WANTED] = (task, score, style)


def _missing_note(models: list[ModelEntry], choice: sidebar.Choice, style: str, reason: str) -> None:
    """Why a combination has no model, and a one-click way to train it: from its sibling's recipe
    where the other style has one, else on the Train page's form set to this task, score and style."""
    other = other_style(style)
    have = slots(models, choice.task)[choice.score, other].entry
    left, right = st.columns([4, 1], vertical_alignment="center")
    left.info(f"**{NAMES[style]}** {choice.score}: {escape_markdown(reason)}", icon=":material/block:")
    if reason.startswith("impossible"):
        return
    if have is not None:
        click, args, why = _train_sibling, (have.path, style), "Its sibling's recipe, in this decoder style"
    else:
        click, args, why = _train_new, (choice.task, choice.score, style), "The Train page, set to this score"
    if right.button("Train it", key=f"explore_train_{style}", on_click=click, args=args, help=why):
        st.switch_page(page_file("train/train.py"))


def _open_view(views: list[str]) -> str:
    """The tab to open: the view the user last opened (:data:`EXPLORE_VIEW`), whatever the style;
    Difference, which only Both has, shows Weights in one style and opens again in Both."""
    view = st.session_state.get(EXPLORE_VIEW)
    if view not in BOTH_VIEWS:
        view = st.session_state[EXPLORE_VIEW] = VIEWS[0]
    return view if view in views else views[0]


def _write(link_note: DeltaGenerator) -> None:
    """The state as the URL, which also ends the page's taking over from a record (front.py)."""
    url.write(link_note)
    front.taken_over()


def render() -> None:
    front.compact_top()
    front.start_recording()  # a fresh visit's front page is recorded for the next server (front.py)
    models = require_models()
    url.read_link(models)  # a shared link, or the history entry Back or Forward went to
    choice = sidebar.choose(models)
    if EXPLORE_TEXT not in st.session_state:
        st.session_state[EXPLORE_TEXT] = front_example(models, choice.task) or ""
    link_note = st.empty()  # the line on a link's unknown parts
    text = st.text_input(
        front.BOX_LABEL,
        key=EXPLORE_TEXT,
        persist_state="session",
        help=front.BOX_HELP,
        placeholder=front.BOX_PLACEHOLDER,
    )
    if choice.task == "toy-fr":
        _lexicon()
    if choice.missing or len(choice.entries) != 1:
        front.stop_recording()  # the front page's record holds one map and nothing else above it
    for style, reason in choice.missing.items():
        _missing_note(models, choice, style, reason)
    url.stage(choice, text, models)
    if not choice.entries:
        _write(link_note)
        st.stop()
    if not text.strip():
        st.warning("Type a sentence to translate (the box is empty).")
        _write(link_note)
        st.stop()

    st.session_state[EXPLORE_MODELS] = [e.name for e in choice.entries.values()]  # Compare opens on them
    panels = {}
    spinner = "Beam search…" if choice.beam > 3 else "Translating…"
    with st.spinner(spinner, show_time=choice.beam > 3):
        for style, entry in choice.entries.items():
            with user_errors():
                path, mtime = model_version(entry)
                al = translate(path, mtime, text, choice.beam)
            panels[NAMES[style]] = al
    first = next(iter(panels.values()))
    unknown = first.unknown_words()
    if unknown:
        front.stop_recording()
        listed = ", ".join(quoted(piece) + ("" if piece == word else f" in {quoted(word)}") for piece, word in unknown)
        st.warning(f"Unknown to this model (read as `<unk>`, marked ⚠ in the heatmap): {listed}")
    entries = _by_panel(choice)
    for col, (name, al) in zip(st.columns(len(panels)), panels.items(), strict=True):
        with col:
            _translation_line(name, entries[name], al)

    reading = {name: for_reading(al, choice.hide_eos, choice.merge) for name, al in panels.items()}
    shown = {name: r.alignment for name, r in reading.items()}
    decoded = {name: r.alignment if r.merged else panels[name] for name, r in reading.items()}  # cells' words
    rule, display = next(((r.rule, r.note) for r in reading.values() if r.note), ("", ""))
    note = f" ({display})" if display else ""
    titles = {name: f"{e.name} · {e.score} / {style_name(e.style)}{note}" for name, e in entries.items()}
    translators = {name: get_model(e) for name, e in entries.items()}
    versions = {name: model_version(e) for name, e in entries.items()}
    views = BOTH_VIEWS if len(panels) == 2 else VIEWS
    st.session_state[front.TABS_KEY] = _open_view(views)
    if note or st.session_state[front.TABS_KEY] != VIEWS[0]:
        front.stop_recording()
    fmt = choice.image_format
    names = {name: e.name for name, e in entries.items()}
    stems = {name: file_stem(model, text) for name, model in names.items()}
    stems[""] = file_stem(models_slug(list(names.values())), text)
    if len(names) == 2:  # Both's difference: the second panel's (Luong's) weights minus the first's
        stems[DIFFERENCE] = file_stem(models_slug(list(names.values())[::-1], joiner="minus"), text)
    st.session_state[FILE_STEMS_KEY] = stems
    shown_rule = rule if note else ""

    def eos() -> str:  # the Weights caption's note: computed only when that tab is drawn
        shares = {name: eos_share(al.weights, al.source_tokens, al.target_tokens) for name, al in panels.items()}
        twins = {name: getattr(guided_twin(models, e), "name", None) for name, e in entries.items()}
        return eos_note(shares, twins, choice.hide_eos)

    score_titles = {n: f"{t} · raw scores" for n, t in titles.items()}
    draw = {
        "Weights": lambda: heatmap_view(shown, "weights", titles, fmt, decoded, translators, shown_rule, eos()),
        "Raw scores": lambda: heatmap_view(shown, "scores", score_titles, fmt, decoded, translators, shown_rule),
        "Per step": lambda: step_view(shown, fmt, titles),
        "Context vectors": lambda: context_view(panels, fmt, titles),
        "Attribution": lambda: attribution_view(panels, versions, text, fmt, titles, choice.beam),
        "Beam search": lambda: beam_view(panels, choice.beam, fmt, titles, translators),
        "Difference": lambda: difference_view(shown, fmt),
        "What-if": lambda: whatif_view(entries, text, fmt),
        "Alignment": lambda: alignment_view(entries, models, text, fmt),
        "Export": lambda: export_view(panels, names, text, display),
        "Training": lambda: training_view(entries, fmt),
    }
    tabs = st.tabs(views, key=front.TABS_KEY, on_change=front.view_changed)
    url.stage(choice, text, models)  # the open view is known: a view's fragment may write it with its cell
    for name, tab in zip(views, tabs, strict=True):
        if tab.open is not False:  # lazy: only the open tab runs
            with tab:
                if name in ("Per step", "Difference") and note:  # the heatmaps say it under the maps
                    st.caption(escape_markdown(rule))
                draw[name]()
    shown_files = [e.path for e in entries.values()]
    folders = sorted({str(Path(e.path).parent) for e in models})  # a model added or removed changes these
    front.save_recording(text, views, st.session_state[front.TABS_KEY], shown_files, folders)
    _write(link_note)
