"""Explore's Alignment view, drift: whether an aligner's links sit a consistent number of words off the
gold's sure links, and from which word on (attnviz.links.drift), for the corpus and for the pair shown."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from attnviz.links import DRIFT_SIDES, DriftReport, GoldSet, corpus_drift, signed
from attnviz.plots import drift_profile, drift_sentence
from attnviz_app.app_pages.explore.screen import page_width
from attnviz_app.app_pages.explore.views import chart
from attnviz_app.app_pages.shared.common import escape_markdown

OPEN_KEY, OF_KEY, SIDE_KEY = "explore_drift_open", "explore_drift_of", "explore_drift_side"
SIDE_NAMES = {"source": "Source index", "target": "Target index"}
RULE = (
    "A link agrees at offset d when the gold has the link d words before it on the shifted side (d = +1: one "
    "word ahead of the gold). A sentence's drift is one change point: offset 0 before it, d from it on, the pair "
    "that agrees with the most sure links; it counts when it wins two links or more, and starts at the first word "
    "that shows it. The map: the share of links that agree at each offset, per tenth of the sentence."
)


def _rows(report: DriftReport, gold: GoldSet) -> list[dict]:
    """One row per pair: its offset, the word it starts at, the links it wins, agreement before and after."""
    rows = []
    for k, s in enumerate(report.sentences):
        words = gold.targets[k] if report.positions == "target" else gold.sources[k]
        row = {"pair": k, "source": " ".join(gold.sources[k]), "target": " ".join(gold.targets[k])}
        if s is None:
            rows.append({**row, "offset": "skipped"})
            continue
        offset = "undecided" if s.offset is None else signed(s.offset)
        start = {"from word": s.start, "word": words[s.start]} if s.start is not None else {}
        rows.append(
            {
                **row,
                "offset": offset,
                **start,
                "links won": s.gain,
                "agree before": s.before,
                "agree after": s.after,
                "agree after, shifted": s.shifted,
            }
        )
    return rows


def _verdict(report: DriftReport, k: int) -> str:
    s = report.sentences[k]
    if s.offset is None:
        return "undecided, no links on one side"
    return f"offset {signed(s.offset)} from {report.positions} word {s.start}" if s.offset else "no drift"


def drift_section(gold: GoldSet, predicted: dict[str, list], k: int, image_format: str) -> None:
    """An expander with the drift of one aligner's links (``predicted``: name -> links per pair, ``None`` for a
    skipped pair) against the gold's sure links: the corpus's summary and map, a table of the pairs, and pair
    ``k``'s links with the shifted ones pointed at their gold word."""
    box = st.expander(
        "Drift: do the links sit a word or two off the gold, and from where?", key=OPEN_KEY, on_change="rerun"
    )
    if not box.open:  # lazy: measured and drawn only when opened
        return
    names = list(predicted)
    for key, options in ((OF_KEY, names), (SIDE_KEY, list(DRIFT_SIDES))):
        if st.session_state.get(key) not in options:
            st.session_state[key] = options[0]
    with box:
        left, right = st.columns(2)
        who = left.segmented_control("Links of", names, key=OF_KEY, persist_state="session") or names[0]
        side = right.segmented_control(
            "Shifted", list(DRIFT_SIDES), format_func=SIDE_NAMES.get, key=SIDE_KEY, persist_state="session"
        )
        side = side or "source"
        report = corpus_drift(predicted[who], [g.sure for g in gold.gold], gold.lengths, side)
        st.markdown(escape_markdown(f"{who}: {report.summary()}."))
        title = f"{who}: drift of the {side} index against the gold's sure links"
        chart(drift_profile(report, title, page_width()), "explore_drift_profile", image_format, "drift")
        st.caption(escape_markdown(RULE))
        st.dataframe(pd.DataFrame(_rows(report, gold)), hide_index=True, key="explore_drift_sentences")
        s, links = report.sentences[k], predicted[who][k]
        if s is None or links is None:
            st.info(f"Pair {k} was skipped: a model cannot read it.")
            return
        what = _verdict(report, k)
        title = f"Pair {k} · {who} against the gold: {what}"
        fig = drift_sentence(gold.sources[k], gold.targets[k], links, gold.gold[k].sure, s, side, title, page_width())
        chart(fig, "explore_drift_pair", image_format, f"drift-{k}")
