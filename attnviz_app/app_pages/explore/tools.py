"""Explore's tools around one decode: the beam's n-best list, what-if edits, downloads."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pandas as pd
import streamlit as st

from attnviz.decoding import Alignment, Translator
from attnviz.external import attention_json, matrix_csv, pair_csv, pair_json, pharaoh_text
from attnviz.plots import align_tops, explore_heatmap, shared_range
from attnviz_app.app_pages.explore.screen import column_width
from attnviz_app.app_pages.explore.views import Panels, chart, columns, file_name, panel_width, side_by_side
from attnviz_app.app_pages.shared.common import escape_markdown

FORCE_STEP_KEY, FORCE_SOURCE_KEY = "explore_force_step", "explore_force_source"
REPLACE_INDEX_KEY, REPLACE_WORD_KEY = "explore_replace_index", "explore_replace_word"


TextOf = Callable[[Alignment], str]  # a decode's translation as text (Translator.text_of)
TABLE_MIN_PX = 560  # two n-best tables narrower than this go one under the other


def _text(al: Alignment, text_of: TextOf | None) -> str:
    return (text_of(al) if text_of else " ".join(al.display_tokens())) or "(empty)"


def nbest_table(al: Alignment, text_of: TextOf | None = None) -> pd.DataFrame:
    """The n-best list best first: the translation, its log p and the length-normalised score."""
    hyps = al.hypotheses or [al]
    return pd.DataFrame(
        {
            "rank": range(1, len(hyps) + 1),
            "translation": [_text(h, text_of) for h in hyps],
            "log p": [float(h.log_prob) for h in hyps],
            "tokens": [len(h.target_tokens) for h in hyps],
            "log p / tokens": [h.ranking_score for h in hyps],
        }
    )


def _rank_label(k: int, ranked: dict[str, Alignment], text_of: dict[str, TextOf]) -> str:
    """An expander's label: the rank, and each panel's hypothesis with its ranking score."""
    parts = [
        escape_markdown(
            f"{name + ': ' if len(ranked) > 1 else ''}{_text(h, text_of.get(name))} ({h.ranking_score:.3f})"
        )
        for name, h in ranked.items()
    ]
    return f"#{k + 1} · " + " · ".join(parts)


def _hypothesis_line(h: Alignment, text_of: TextOf | None) -> str:
    n, text = len(h.target_tokens), escape_markdown(_text(h, text_of))
    return f"**{text}**  \nlog p = {h.log_prob:.3f} · log p / {n} tokens = {h.ranking_score:.3f}"


def beam_view(
    panels: Panels,
    beam: int,
    image_format: str,
    titles: dict[str, str],
    translators: Mapping[str, Translator] | None = None,
) -> None:
    """The n-best list of beam search (each hypothesis's translation, log p and the length-normalised
    score it is ranked by), and every hypothesis's attention map (each panel's side by side, all on
    one colour scale) under its translation; a map is drawn when its rank is opened. The translations
    are the ``translators``' text (detokenized, ``<unk>`` replaced), else the tokens."""
    if beam == 1:
        st.info("Greedy decoding (beam width 1). Raise the **Beam width** in the sidebar to see the n-best list.")
        return
    text_of = {name: tr.text_of for name, tr in (translators or {}).items()}
    stack = len(panels) > 1 and column_width(len(panels)) < TABLE_MIN_PX
    for col, (name, al) in zip(columns(panels, stack=stack), panels.items(), strict=True):
        with col:
            if len(panels) > 1:
                st.markdown(f"**{escape_markdown(name)}** · {escape_markdown(titles[name])}")
            table = nbest_table(al, text_of.get(name))
            table["translation"] = table["translation"].map(escape_markdown)  # st.table reads Markdown
            st.table(table.style.format({"log p": "{:.3f}", "log p / tokens": "{:.3f}"}), hide_index=True)
    hyps = {name: al.hypotheses or [al] for name, al in panels.items()}
    zmin, zmax = shared_range([h for hs in hyps.values() for h in hs], "weights")
    for k in range(max(len(hs) for hs in hyps.values())):
        ranked = {name: hs[k] for name, hs in hyps.items() if k < len(hs)}
        label = _rank_label(k, ranked, text_of)
        rank = st.expander(label, expanded=k == 0, key=f"explore_nbest_open_{k}", on_change="rerun")
        if not rank.open:  # lazy: a rank's maps are built and sent only when it is opened
            continue
        with rank:
            stack = not side_by_side(ranked)
            width = panel_width(ranked, stack)
            figs = align_tops(
                [
                    explore_heatmap(
                        h, "weights", f"{titles[name]} · #{k + 1}", zmin, zmax, max_width=width, fill=len(ranked) > 1
                    )
                    for name, h in ranked.items()
                ]
            )
            for col, name, fig in zip(columns(ranked, stack), ranked, figs, strict=True):
                with col:
                    st.markdown(_hypothesis_line(ranked[name], text_of.get(name)))
                    chart(fig, f"explore_nbest_{name}_{k}", image_format, f"beam-{k + 1}", name)
    st.caption(
        r"Beam search keeps the $k$ best partial translations by $\log p(y_{1..t} \mid x)$ and ranks the finished"
        r" ones by $\log p / \text{length}$ (the target's tokens, $\langle eos \rangle$ counted), the number in"
        r" brackets; each hypothesis has its own attention, since its decoder states differ."
        + (" Every map is on one colour scale." if len(panels) > 1 else "")
    )


def export_view(panels: Panels, models: dict[str, str], sentence: str, display: str = "") -> None:
    """Downloads for every panel: the matrices as CSV and JSON, the alignment in Pharaoh format;
    in Both, the pair in one file too. File names carry the model and a slug of the sentence. ``display``:
    what the maps change for reading (``<eos>`` hidden, pieces merged), which the files do not."""
    st.caption(
        "The CSV files have one row per target step and one column per source token (blank where a score is"
        " $-\\infty$). The JSON holds everything the decode recorded (weights, scores, contexts, decoder states,"
        " n-best list). Pharaoh links each target word to its argmax source word as `source-target`, 0-based word"
        " indices of the text (subword pieces joined, `<eos>` left out), as gold files count them. Figures:"
        " the camera button of each figure's toolbar saves it as PNG or SVG (choose in the sidebar)."
    )
    if display:
        st.info(
            f"The maps show the decode read for words ({escape_markdown(display)}); these files hold it as the model"
            " made it: every token, `<eos>` included, each row's weights as the model gave them. The figure for a"
            " paper and Both's difference CSV follow the sidebar."
        )
    many = len(panels) > 1
    for col, (name, al) in zip(columns(panels), panels.items(), strict=True):
        with col:
            if many:
                st.markdown(f"**{escape_markdown(name)}** · {escape_markdown(models[name])}")
            # one matrix named after the model, with the sentence
            everything = attention_json({models[name]: al}, metadata={"sentence": sentence} if sentence else None)
            files = [  # (label, contents, what, extension, mime)
                ("Weights (CSV)", matrix_csv(al, "weights"), "weights", "csv", "text/csv"),
                ("Raw scores (CSV)", matrix_csv(al, "scores"), "scores", "csv", "text/csv"),
                ("Everything (JSON)", everything, "alignment", "json", "application/json"),
                ("Pharaoh", pharaoh_text(al), "links", "pharaoh", "text/plain"),
            ]
            for row in (files[:2], files[2:]):
                for box, (label, data, what, ext, mime) in zip(st.columns(2), row, strict=True):
                    box.download_button(
                        label,
                        data,
                        file_name=f"{file_name(what, name)}.{ext}",
                        mime=mime,
                        key=f"explore_dl_{what}_{name}",
                        on_click="ignore",
                    )
            st.markdown("**Pharaoh** (`source-target`, 0-based word indices):")
            st.code(pharaoh_text(al).strip() or "(no links)", language=None, wrap_lines=True)
    if many:
        st.markdown("**Both models in one file**")
        left, right, _ = st.columns([1, 1, 2])
        left.download_button(
            "Both (JSON)",
            pair_json(dict(panels), models, sentence),
            file_name=file_name("both.json"),
            mime="application/json",
            key="explore_dl_pair_json",
            on_click="ignore",
        )
        right.download_button(
            "Both weights (CSV)",
            pair_csv(dict(panels), models),
            file_name=file_name("both.csv"),
            mime="text/csv",
            key="explore_dl_pair_csv",
            on_click="ignore",
        )
