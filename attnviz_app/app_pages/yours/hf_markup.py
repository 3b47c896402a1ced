"""Your model, Hugging Face folder: a sentence with inline markup translated by the model (its plain text) and
each element carried into the translation along the word links of the heads the user picks (the opened
attention, a compared head, or the heads the silver ranking found to align), shown as every page shows carried
markup (attnviz_app/app_pages/shared/markup_ui.py) and as boxes on the word-level attention."""

from __future__ import annotations

import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.external import Pick, carry_through
from attnviz.links import DIRECTIONAL, SPLIT_RULES, parse_markup
from attnviz.plots import markup_figure, plot_config
from attnviz_app.app_pages.explore.screen import page_width
from attnviz_app.app_pages.shared.common import error_text, escape_markdown
from attnviz_app.app_pages.shared.markup_ui import RULES, SPLITS, markup_box, show_carried
from attnviz_app.app_pages.yours import hf_cache, panel
from attnviz_app.app_pages.yours.hf_rank import ALIGNING_KEY

TEXT_KEY, TARGET_KEY, PICK_KEY = "yours_hf_markup_text", "yours_hf_markup_target", "yours_hf_markup_pick"
METHOD_KEY, SPLIT_KEY = "yours_hf_markup_method", "yours_hf_markup_split"
MAX_WIDTH_PX = 900


def _choices(picks: list[Pick], folder: str) -> dict[str, Pick]:
    """The attentions to carry the markup along: the ones shown, and the heads that align (averaged) when
    the silver ranking of this model found some."""
    choices = {p.name: p for p in picks}
    where, aligning = st.session_state.get(ALIGNING_KEY) or (None, [])
    if where == folder and aligning:
        p = Pick(heads=tuple(aligning))
        choices[f"the heads that align ({p.name.removeprefix('heads ')}), averaged"] = p
    return choices


def markup(key: tuple, text: str, picks: list[Pick]) -> None:
    """The markup box, the choice of attention, links and split rule, and the carried markup. ``key``: the
    page's decode (its path, version, label, beam and languages are used; its text is the markup's plain
    text)."""
    path, version, label, _, _, beam, langs = key
    source = markup_box(TEXT_KEY, text)
    choices = _choices(picks, path)
    a, b = st.columns(2, vertical_alignment="bottom")
    name = a.selectbox("Carry along the links of", list(choices), key=PICK_KEY, persist_state="session")
    method = (
        b.segmented_control(
            "Links from attention",
            DIRECTIONAL,
            default="argmax",
            key=METHOD_KEY,
            help=panel.METHOD_HELP,
            persist_state="session",
        )
        or "argmax"
    )
    c, d = st.columns(2, vertical_alignment="bottom")
    split = (
        c.segmented_control(
            "Linked words not contiguous: cover the",
            SPLIT_RULES,
            format_func=SPLITS.get,
            default="hull",
            key=SPLIT_KEY,
            persist_state="session",
        )
        or "hull"
    )
    target = d.text_input(
        "Carry into",
        key=TARGET_KEY,
        max_chars=2000,
        placeholder="the model's own translation",
        help="A translation of your own, forced through the model; empty: the model's own "
        "translation of the text without the markup.",
        persist_state="session",
    ).strip()
    pick = choices.get(name) or next(iter(choices.values()))
    try:
        parsed = parse_markup(source)
        with st.spinner("Translating and carrying the markup…"):
            c_ = hf_cache.decode(path, version, label, parsed.plain, target, beam, langs)
            result, reading = carry_through(c_, parsed, pick, method, split, translation=target or None)
    except AttnvizError as e:
        st.error(error_text(e))
        return
    show_carried(result, "yours_hf_markup")
    spans = [(s.element.label, s.source_words, s.target_words) for s in result.spans]
    fig = markup_figure(
        reading.weights,
        reading.source_words,
        reading.target_words,
        result.links,
        spans,
        f"Markup carried along the {method} links of {pick.name}",
        min(MAX_WIDTH_PX, page_width()),
        f"{method} links",
    )
    st.plotly_chart(fig, key="yours_hf_markup_map", width="content", config=plot_config("attnviz-markup"))
    st.caption(escape_markdown(RULES).replace(r"\*", "*"))
