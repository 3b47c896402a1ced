"""Explore's Alignment view, a sample of the corpus: N pairs of a split of the model's own data read
by each shown model, their links scored against gold (AER) or eflomal's links (agreement), the worst
listed here and all of them in one HTML report to download (attnviz.links.sample_alignments, the
same as ``attnviz align-report``)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from attnviz.links import REPORT_METHODS, REPORT_SPLITS, ReportSentence, sample_alignments
from attnviz.plots import MEASURES, ReportSummary, report_html, worst_first
from attnviz.store import ModelEntry, file_stem
from attnviz_app.app_pages.explore.links import Method
from attnviz_app.app_pages.shared.common import escape_markdown, get_model, model_version, user_errors

SPLIT_KEY, N_KEY, SEED_KEY = "explore_sample_split", "explore_sample_n", "explore_sample_seed"
RESULTS_KEY = "_explore_samples"  # {(path, mtime, split, n, seed, method): AlignmentSample}: kept across reruns
MAX_N = 200  # pairs the app samples at most (the CLI takes up to attnviz.links.MAX_SAMPLE)
WORST_SHOWN = 8


def _command(entry: ModelEntry, split: str, n: int, seed: int, method: str) -> str:
    """The CLI command that writes the same report."""
    options = f"--split {split} --n {n} --seed {seed} --method {method}"
    return f"attnviz align-report --model {entry.name} {options} --out report.html"


def _row(s: ReportSentence, measure: str) -> dict:
    return {
        "pair": s.index,
        measure: round(s.score, 3),
        "source": " ".join(s.source_words),
        "target": " ".join(s.target_words),
    }


def sample_view(entries: dict[str, ModelEntry], method: Method) -> None:
    """The sample's options, a button that reads it with every shown model, and each model's result."""
    name = method.name if method.name in REPORT_METHODS else "argmax"
    if name != method.name:
        st.caption(f"A sample reads argmax or DTW links; {escape_markdown(method.name)} is read as argmax here.")
    left, mid, right = st.columns(3)
    split = (
        left.segmented_control("Split", REPORT_SPLITS, default="train", key=SPLIT_KEY, persist_state="session")
        or "train"
    )
    n = int(
        mid.number_input(
            "Pairs", 1, MAX_N, 20, key=N_KEY, help="How many pairs of the split to sample.", persist_state="session"
        )
    )
    seed = int(
        right.number_input(
            "Seed", 0, 10**6, 0, key=SEED_KEY, help="The same seed draws the same pairs.", persist_state="session"
        )
    )
    results = st.session_state.setdefault(RESULTS_KEY, {})
    asked = {panel: (*model_version(entry), split, n, seed, name) for panel, entry in entries.items()}
    if st.button(f"Sample {n} pairs and score their links", key="explore_sample_run", type="primary"):
        for panel, entry in entries.items():
            with user_errors(), st.spinner(f"Reading {n} pairs with {entry.name}…"):
                results[asked[panel]] = sample_alignments(get_model(entry), split=split, n=n, seed=seed, method=name)
    shown = False
    for panel, entry in entries.items():
        sample = results.get(asked[panel])
        if sample is None:
            continue
        shown = True
        measure = MEASURES[sample.measure][0]
        column = "AER" if sample.measure == "AER" else "agreement"
        unread = f"; {sample.skipped} sampled pairs it could not read as words" * bool(sample.skipped)
        st.markdown(
            f"**{escape_markdown(panel)}** · {escape_markdown(entry.name)}: {len(sample.sentences)} pairs of "
            f"{escape_markdown(sample.data)} ({split}), mean {measure} **{sample.mean:.3f}**{escape_markdown(unread)}"
        )
        worst = worst_first(sample.sentences, sample.measure)[:WORST_SHOWN]
        rows = [_row(s, column) for s in worst]
        narrow = {"pair": st.column_config.NumberColumn(width="small"), column: st.column_config.NumberColumn(width=80)}
        st.dataframe(pd.DataFrame(rows), hide_index=True, column_config=narrow, key=f"explore_sample_worst_{panel}")
        data = f"{sample.data} ({split} split)"
        command = _command(entry, split, n, seed, name)
        summary = ReportSummary(entry.name, data, name, sample.measure, command, sample.skipped)
        st.download_button(
            "The report, every pair worst first (HTML)",
            lambda sample=sample, summary=summary: report_html(sample.sentences, summary),
            file_name=f"{file_stem(entry.name, f'{split}-{n}-seed-{seed}')}-report.html",
            mime="text/html",
            key=f"explore_sample_report_{panel}",
            on_click="ignore",
        )
    if not shown:
        st.caption(
            "Draws pairs of the model's own data, reads each with the model as words, and scores its links against "
            "the pairs' gold links (AER) or, without gold, against eflomal's links of the same pairs (agreement). "
            "The same as `attnviz align-report`."
        )
