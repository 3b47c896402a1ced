"""The Explore page's body (``app.py`` draws the title first and then calls :func:`render`)."""

from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from attnviz.data.toyfr import LEXICON
from attnviz.errors import AttnvizError
from attnviz.plots_compare import compare_heatmaps
from pages.shared import explore_sidebar as sidebar
from pages.shared.common import (
    annotations,
    escape_markdown,
    get_model,
    model_label,
    model_version,
    require_models,
    translate,
    user_errors,
)
from pages.shared.explore_tools import beam_view, export_view, whatif_view
from pages.shared.explore_views import chart, context_view, scores_view, step_view, weights_view

VIEWS = ["Weights", "Raw scores", "Per step", "Context vectors", "Beam search", "What-if", "Export"]
VIEW_KEY = "explore_view"


def render() -> None:
    """The sidebar, the sentence box, the translation and the views of its decode."""
    models = require_models()
    choice = sidebar.choose(models)
    entry = choice.entry
    if sidebar.TEXT_KEY not in st.session_state:
        st.session_state[sidebar.TEXT_KEY] = entry.get("example") or ""

    text = st.text_input(
        "Source sentence (press Enter to translate)",
        key=sidebar.TEXT_KEY,
        help="Type one sentence in the model's source language; the heatmap is redrawn on Enter.",
    )
    if entry.get("task") == "toy-fr":
        lexicon = st.expander("What can I type? The toy-fr lexicon", key="explore_lexicon_open", on_change="rerun")
        if lexicon.open:  # lazy: the table is sent only when opened
            with lexicon:
                st.caption("toy-fr is a small English → French-like language; these are its words (plurals included).")
                st.dataframe(pd.DataFrame(LEXICON), hide_index=True, key="explore_lexicon")
    if not text.strip():
        st.warning("Type a sentence to translate (the box is empty).")
        st.stop()

    with user_errors():
        path, mtime = model_version(entry)
        al = translate(path, mtime, text, choice.beam)
    try:
        states = annotations(path, mtime, text)
    except AttnvizError:
        states = None

    unknown = [tok for tok, unk in zip(al.source_tokens, al.source_unknown, strict=False) if unk]
    if unknown:
        listed = ", ".join(f"“{escape_markdown(t)}”" for t in dict.fromkeys(unknown))
        st.warning(f"Unknown to this model (read as `<unk>`, marked ⚠ in the heatmap): {listed}")
    translation = get_model(entry).text_of(al) or "(empty)"
    st.markdown(f"**Translation** ({escape_markdown(model_label(entry))}): {escape_markdown(translation)}")
    copies = al.unk_copies()
    if copies:
        copied = ", ".join(f"step {t + 1} → “{escape_markdown(al.source_word(s))}”" for t, s in copies.items())
        st.caption(
            f"The model said `<unk>` (a word outside its vocabulary) and the translation copies the source word "
            f"it attended to most at that step: {copied}. The heatmap keeps `<unk>`."
        )

    if choice.other is not None:
        try:
            other = translate(*model_version(choice.other), text, choice.beam)
        except AttnvizError as e:
            st.warning(
                f"{escape_markdown(choice.other['name'])} cannot translate this sentence: {escape_markdown(str(e))}"
            )
        else:
            names = (model_label(entry), model_label(choice.other))
            if names[0] == names[1]:
                names = (f"{names[0]} (1)", f"{names[1]} (2)")
            st.caption("Side by side, on one colour scale: the same sentence through two models.")
            fig = compare_heatmaps(dict(zip(names, (al, other), strict=True)))
            chart(fig, "explore_side_by_side_chart", choice.image_format, "side-by-side")

    title = f"{entry['name']}: {entry['score']} / {entry['style']}"
    file_stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", entry["name"])
    tabs = st.tabs(VIEWS, key=VIEW_KEY, on_change="rerun")
    views = {
        "Weights": lambda: weights_view(al, states, choice.image_format, title),
        "Raw scores": lambda: scores_view(al, states, choice.image_format, title),
        "Per step": lambda: step_view(al, choice.image_format),
        "Context vectors": lambda: context_view(al, choice.image_format),
        "Beam search": lambda: beam_view(al, choice.beam, choice.image_format),
        "What-if": lambda: whatif_view(entry, text, choice.image_format),
        "Export": lambda: export_view(al, file_stem),
    }
    for name, tab in zip(VIEWS, tabs, strict=True):
        if tab.open is not False:  # lazy: only the open tab runs
            with tab:
                views[name]()
