"""Explore's Alignment view: word links extracted from attention beside eflomal's for this sentence,
both scored against gold links (attnviz_app/app_pages/explore/gold.py), or a sentence's markup carried along them
(attnviz_app/app_pages/explore/markup.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import streamlit as st

from attnviz.data import to_pharaoh
from attnviz.errors import AttnvizError
from attnviz.links import DIRECTIONAL, agreement, reverse_entry
from attnviz.plots import align_tops, links_figure, share_scales
from attnviz.store import ModelEntry, slug
from attnviz_app.app_pages.explore.gold import gold_view
from attnviz_app.app_pages.explore.links import Method, data_of, eflomal_note, eflomal_run, reads_characters, word_links
from attnviz_app.app_pages.explore.markup import markup_view
from attnviz_app.app_pages.explore.sample import sample_view
from attnviz_app.app_pages.explore.screen import column_width, page_width
from attnviz_app.app_pages.explore.views import chart, columns, file_name, panel_width
from attnviz_app.app_pages.shared.common import (
    error_text,
    escape_markdown,
    get_model,
    model_version,
    translate,
    user_errors,
)

if TYPE_CHECKING:
    from streamlit.delta_generator import DeltaGenerator

PART_KEY, METHOD_KEY, THRESHOLD_KEY, REFERENCE_KEY = (
    "explore_align_part",
    "explore_align_method",
    "explore_align_threshold",
    "explore_align_reference",
)
STACK_WORDS = 14  # a longer sentence's link maps go one under the other in Both
SIDE_CONTROLS_PX = 960  # a narrower page puts the six methods of a task with a reverse model under the parts
SHOW_CONTROL_PX = 520  # the four parts' control, whole: a narrower half column puts the methods under it
PARTS = {
    "sentence": "This sentence",
    "gold": "Against gold",
    "markup": "Markup carried along",
    "sample": "A corpus sample",
}
SYMMETRIC = ("intersection", "union", "grow-diag-final")  # the ones offered; the CLI has all of extract.SYMMETRIC
METHODS = (*DIRECTIONAL, *SYMMETRIC)  # every method the view offers (the symmetric ones with reverse models)
METHOD_HELP = (
    "argmax: each target word linked to the source word it attends to most. threshold: every cell whose weight "
    "reaches the threshold. dtw (dynamic time warping, as Whisper times its words): the cheapest monotonic path "
    "through the standardised attention (every word linked, no reordering). intersection, union, grow-diag-final: "
    "this model's argmax links combined with those of the reverse model (target to source), as phrase-based "
    "systems symmetrise word aligners; offered when the task's reverse model is there."
)


def pick_method(
    entries: dict[str, ModelEntry], reverses: dict[str, ModelEntry | None], where: DeltaGenerator
) -> Method:
    """The extraction method (symmetric ones only where every shown model has a reverse model,
    ``reverses``: panel name -> its reverse's catalog entry) in ``where``, and the threshold; a
    symmetric method reads each shown model's own reverse."""
    symmetric = all(reverses.values())
    methods = list(METHODS if symmetric else DIRECTIONAL)
    if st.session_state.get(METHOD_KEY) not in methods:
        st.session_state[METHOD_KEY] = METHODS[0]
    name = (
        where.segmented_control(
            "Links from attention", methods, key=METHOD_KEY, help=METHOD_HELP, persist_state="session"
        )
        or METHODS[0]
    )
    if name == "threshold":
        threshold = st.slider("Threshold", 0.05, 1.0, 0.3, 0.05, key=THRESHOLD_KEY, persist_state="session")
        return Method(name, float(threshold))
    if not symmetric:
        where.caption(f"No reverse model of this task is shipped: {', '.join(DIRECTIONAL)} only (one direction).")
    if name not in SYMMETRIC:
        return Method(name, 0.3)
    many = len(entries) > 1
    shown = "; ".join(f"{panel}: {r.name}" if many else r.name for panel, r in reverses.items())
    where.caption(f"Reverse model{'s' if many else ''}: {escape_markdown(shown)}")
    pairs = tuple((model_version(entries[panel])[0], model_version(r), r.name) for panel, r in reverses.items())
    return Method(name, 0.3, pairs)


def alignment_view(entries: dict[str, ModelEntry], models: list[ModelEntry], text: str, image_format: str) -> None:
    """This sentence's links, the links of a gold set scored, or a marked-up sentence's markup carried along
    them, for every shown model (``entries``: panel name -> catalog entry), side by side."""
    reverses = {name: reverse_entry(models, entry) for name, entry in entries.items()}
    roomy = not all(reverses.values()) or page_width() >= SIDE_CONTROLS_PX  # six methods need the room
    side = roomy and column_width(2) >= SHOW_CONTROL_PX
    left, right = st.columns(2) if side else (st.container(), st.container())
    part = left.segmented_control(
        "Show", list(PARTS), format_func=PARTS.get, key=PART_KEY, persist_state="session", default="sentence"
    )
    part = part or "sentence"
    method = pick_method(entries, reverses, right)
    if part == "gold":
        gold_view(entries, method, image_format)
    elif part == "markup":
        markup_view(entries, method, text, image_format)
    elif part == "sample":
        sample_view(entries, method)
    else:
        sentence_view(entries, method, text, image_format)


def _eflomal(entry: ModelEntry, source: list[str], target: list[str]) -> tuple[list | None, str]:
    """eflomal's links for one pair and what it ran on, or ``None`` and why it did not run."""
    if reads_characters(model_version(entry)):
        return None, "eflomal aligns words; this model reads characters, so eflomal is not run."
    try:
        spec, options = data_of(model_version(entry))
        with st.spinner("eflomal…"):
            run = eflomal_run(spec, options, ((tuple(source), tuple(target)),))
    except AttnvizError as e:
        return None, f"eflomal did not run: {e}"
    return run.links[0], eflomal_note(run, "this pair")


def sentence_view(entries: dict[str, ModelEntry], method: Method, text: str, image_format: str) -> None:
    """Attention's and eflomal's links for the sentence, per model on its word-level heatmap and as
    Pharaoh lines; every model aligned on its own translation or on the one typed."""
    translations = {}
    for name, entry in entries.items():
        with user_errors():
            translations[name] = get_model(entry).text_of(translate(*model_version(entry), text))
    shown = " / ".join(dict.fromkeys(t for t in translations.values() if t))
    reference = st.text_input(
        "Reference translation (optional)",
        key=REFERENCE_KEY,
        max_chars=1000,
        placeholder=shown,
        help="A translation of your own; empty: each model's own translation.",
        persist_state="session",
    )
    many = len(entries) > 1
    stack = many and len(text.split()) > STACK_WORDS
    width = panel_width(entries, stack=stack or not many)
    drawn: dict[str, Drawn | AttnvizError | str] = {}
    for name, entry in entries.items():
        target = reference.strip() or translations[name]
        if not target.strip():
            drawn[name] = "The model translated the sentence to nothing; type a translation to align on."
            continue
        try:
            drawn[name] = _links_of(name if many else "", entry, method, text, target, width)
        except AttnvizError as e:
            drawn[name] = e
    share_scales(align_tops([d.figure for d in drawn.values() if isinstance(d, Drawn)]))  # one scale, one title size
    for col, (name, d) in zip(columns(entries, stack=stack), drawn.items(), strict=True):
        with col:
            if not isinstance(d, Drawn):
                st.info(escape_markdown(d)) if isinstance(d, str) else st.error(error_text(d))
                continue
            panel = name if many else ""
            key = f"explore_align_links{'_' + panel if panel else ''}"
            chart(d.figure, key, image_format, f"alignment-{method.name}", panel or None)
            st.caption(escape_markdown(d.caption))
            _pharaoh_downloads(d.links, panel)


@dataclass(frozen=True)
class Drawn:
    """One model's links on its word-level map, what the caption says, each aligner's links."""

    figure: object
    caption: str
    links: dict[str, list | None]


def _links_of(panel: str, entry: ModelEntry, method: Method, text: str, target: str, width: int) -> Drawn:
    """One model's links on its word-level heatmap, beside eflomal's (an :class:`AttnvizError` where
    the model cannot read the pair)."""
    reading, links = word_links(model_version(entry), method, text, target)
    efl, efl_note = _eflomal(entry, reading.source_words, reading.target_words)
    name = f"attention ({method.name})"
    layers = {name: ("attention", links.links)} | ({"eflomal": ("eflomal", efl)} if efl is not None else {})
    title = f"{panel} · {entry.name}: word links" if panel else f"{entry.name}: word links"
    fig = links_figure(reading.weights, reading.source_words, reading.target_words, layers, title, width)
    how = {"threshold": f"every weight ≥ {method.threshold:.2f}", "argmax": "each target word's largest weight"}
    reverse = method.reverse_name(model_version(entry))
    rule = how.get(method.name, f"{method.name} of this model's and {reverse}'s argmax links")
    agree = f" Attention and eflomal agree at F1 = {agreement(links.links, efl):.2f}." if efl is not None else ""
    caption = f"{reading.caption} Links from attention: {rule}. {efl_note}{agree}"
    return Drawn(fig, caption, {name: links.links, "eflomal": efl})


def _pharaoh_downloads(aligners: dict[str, list | None], panel: str) -> None:
    """Each aligner's links as a Pharaoh line (source-target, 0-based, on words) with a download."""
    shown = {name: links for name, links in aligners.items() if links is not None}
    st.markdown("**Pharaoh** (`source-target`, 0-based word indices)")
    for col, (name, links) in zip(st.columns(len(shown)), shown.items(), strict=True):
        line = to_pharaoh(links)
        short = name.split()[0]
        col.caption(escape_markdown(name))
        col.code(line or "(no links)", language=None, wrap_lines=True)
        file = f"{file_name(f'{slug(name)}-links', panel or None)}.pharaoh"  # attention-dtw-links: the method too
        key = f"explore_align_dl_{short}{'_' + panel if panel else ''}"
        col.download_button(
            f"Download {short}'s links", line + "\n", file_name=file, mime="text/plain", key=key, on_click="ignore"
        )
