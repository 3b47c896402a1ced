"""Explore's Alignment view, scored: attention's and eflomal's links against gold links, from the task's
own test split (toy-fr has gold) or from uploaded files, per sentence and for the corpus, and their drift."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.links import (
    CorpusAlignment,
    GoldSet,
    gold_of_pairs,
    gold_of_upload,
    is_bitext,
    score_table,
    text_lines,
)
from attnviz.plots import align_tops, gold_figure, share_scales
from attnviz.store import ModelEntry
from attnviz_app.app_pages.explore.adapt_panel import adapt_section, adapted_maps
from attnviz_app.app_pages.explore.drift import drift_section
from attnviz_app.app_pages.explore.links import (
    Method,
    corpus_links,
    data_of,
    eflomal_note,
    eflomal_run,
    reads_characters,
    test_split,
    word_links,
)
from attnviz_app.app_pages.explore.views import chart, columns, panel_width
from attnviz_app.app_pages.shared.choices import keep_choice
from attnviz_app.app_pages.shared.common import error_text, escape_markdown, model_version
from attnviz_app.app_pages.shared.gold_convention import AUTO, gold_convention

if TYPE_CHECKING:
    from streamlit.runtime.uploaded_file_manager import UploadedFile

SOURCE_KEY, CONVENTION_KEY = "explore_gold_source", "explore_gold"  # the convention: explore_gold_format, _base
GOLD_FILE_KEY, SRC_FILE_KEY, TGT_FILE_KEY = "explore_gold_file", "explore_gold_src_file", "explore_gold_tgt_file"
PAIR_KEY, SHOW_KEY = "explore_gold_pair", "explore_gold_show"
UPLOAD_HELP = (
    "Pharaoh, talp (the Hansards set) or NAACL links, 0- or 1-based: say which below, or leave it to auto-detect."
)
SENTENCES_HELP = (
    "One sentence per line, words separated by spaces, as the gold indices count them; or a bitext alone (one "
    "`source ||| target` pair per line). Without sentences a one-line-a-pair gold file is read on the task's "
    "test split."
)


def _sentences(src: UploadedFile | None, tgt: UploadedFile | None) -> tuple[tuple | None, tuple | None] | None:
    """The uploaded sentences as ``gold_of_upload`` takes them, ``(lines, names)``: ``(None, None)`` for none
    (the task's test pairs are used); None, with a note, when they are half given."""
    src_lines = text_lines(src.getvalue(), src.name) if src is not None else None
    if src_lines is not None and (tgt is not None or is_bitext(src_lines)):
        lines = (src_lines, text_lines(tgt.getvalue(), tgt.name) if tgt is not None else None)
        return lines, (src.name, tgt.name if tgt is not None else None)
    if src is not None or tgt is not None:
        st.info(
            "Upload both sentence files (source and target), a `source ||| target` bitext, or neither to use "
            "the task's test pairs."
        )
        return None
    return None, None


def _uploaded_gold(test: list) -> GoldSet | None:
    """The uploaded files as a gold set (None until a gold file is uploaded); DataError on a malformed file."""
    left, right = st.columns(2)
    gold = left.file_uploader("Gold alignment file", key=GOLD_FILE_KEY, help=UPLOAD_HELP)
    src = right.file_uploader(
        "Sentences: source, or a `source ||| target` bitext", key=SRC_FILE_KEY, help=SENTENCES_HELP
    )
    tgt = right.file_uploader("Target sentences (not with a bitext)", key=TGT_FILE_KEY)
    given, problem = None, None  # given: the sentences as _sentences returns them, once a gold file is there
    if gold is not None:
        try:
            given = _sentences(src, tgt)
        except AttnvizError as e:  # a malformed sentence file: the radios stay, the error is shown once
            problem = e

    @functools.cache  # auto-detect's caption and the read below are one parse when both are left to it
    def read(fmt: str, base: int | str) -> GoldSet:
        sentences, names = given
        lines = text_lines(gold.getvalue(), gold.name)
        return gold_of_upload(lines, gold.name, fmt, base, sentences, names or ("source file", "target file"), test)

    fmt, base = gold_convention(CONVENTION_KEY, (lambda f, b: read(f, b).convention) if given else None, left)
    if problem is not None:
        raise problem
    if gold is None:
        st.info("Upload a gold alignment file (and its sentences) to score the links against it.")
        return None
    return read(fmt, base) if given else None


def _gold_set(entry: ModelEntry) -> GoldSet | None:
    """The built-in gold links of the task's test split, or the uploaded ones."""
    spec, options = data_of(model_version(entry))
    try:
        test = test_split(spec, options)
    except AttnvizError:
        test = []  # the model's data is gone (an upload): only an upload of all three files can be scored
    origin = f"{spec} test split"
    kinds = {"builtin": f"Built-in: {origin} ({len(test)} pairs)", "upload": "Upload files"}
    if not test or any(p.sure is None for p in test):
        kinds.pop("builtin")
    keep_choice(SOURCE_KEY, list(kinds), kinds.get, next(iter(kinds)))  # the built-in label follows the model
    kind = st.radio(
        "Gold links", list(kinds), format_func=kinds.get, key=SOURCE_KEY, horizontal=True, persist_state="session"
    )
    return gold_of_pairs(test, origin) if kind == "builtin" else _uploaded_gold(test)


def gold_view(entries: dict[str, ModelEntry], method: Method, image_format: str) -> None:
    """Corpus and per-sentence precision, recall and AER of attention (``method``) for every shown
    model (``entries``: panel name -> catalog entry) and of eflomal, and one pair's maps with gold
    and predicted links, one per model side by side."""
    entry = next(iter(entries.values()))
    if reads_characters(model_version(entry)):
        st.info(
            "Gold links join words; this model reads characters, so its links are not scored here. The Evaluate "
            "page reports its AER on its own gold (links of characters)."
        )
        return
    many = len(entries) > 1
    labels = {name: f"{name} attention ({method.name})" if many else f"attention ({method.name})" for name in entries}
    try:
        gold = _gold_set(entry)
        if gold is None:
            return
        sources, targets = tuple(map(tuple, gold.sources)), tuple(map(tuple, gold.targets))
        aligned: dict[str, CorpusAlignment] = {}
        for name, e in entries.items():
            with st.spinner(f"Aligning {len(sources)} pairs with {name}'s attention…"):
                aligned[name] = corpus_links(model_version(e), method, sources, targets)
    except AttnvizError as e:
        st.error(error_text(e))
        return
    predicted = {labels[name]: a.links for name, a in aligned.items()}
    predicted |= adapt_section(entries, labels, method, gold)  # a copy adapted to a bitext: its rows
    # a pair any model skipped (too long for it) is left out for every aligner, so all are scored on the same pairs
    skipped = {k for a in aligned.values() for k, links in enumerate(a.links) if links is None}
    predicted = {who: [None if k in skipped else x for k, x in enumerate(links)] for who, links in predicted.items()}
    note = ""
    try:
        with st.spinner(f"eflomal on {len(sources)} pairs…"):
            run = eflomal_run(*data_of(model_version(entry)), tuple(zip(sources, targets, strict=True)))
        kept = [None if k in skipped else links for k, links in enumerate(run.links)]
        predicted["eflomal"], note = kept, eflomal_note(run, f"the {len(sources)} pairs")
    except AttnvizError as e:
        note = f"eflomal did not run: {e}"
    corpus, sentences = score_table(gold.gold, predicted)
    _report(gold, aligned, skipped)
    scored = len(gold.gold) - len(skipped)
    st.markdown(f"**{escape_markdown(gold.origin)}**: {scored} pairs, scored for the corpus")
    aligner = st.column_config.TextColumn(width="large")  # room for a row such as "adapted 200 steps: attention…"
    st.dataframe(pd.DataFrame(corpus), hide_index=True, key="explore_gold_corpus", column_config={"aligner": aligner})
    st.caption(
        escape_markdown(
            "AER = 1 − (|A∩S| + |A∩P|) / (|A| + |S|), precision = |A∩P| / |A|, recall = |A∩S| / |S| (Och & Ney "
            f"2003), summed over the pairs. Attention is forced through each gold target and read on words. {note}"
        )
    )
    _sentence(entries, labels, method, gold, predicted, sentences, image_format)
    drift_section(gold, predicted, int(st.session_state.get(PAIR_KEY, 0)), image_format)


def _report(gold: GoldSet, aligned: dict[str, CorpusAlignment], skipped: set[int]) -> None:
    """How the gold file was read, its warnings, and the pairs the models could not read."""
    chosen = {st.session_state.get(f"{CONVENTION_KEY}_{part}") for part in ("format", "base")} != {AUTO}
    if gold.convention and chosen:  # left to auto-detect, the convention widget's caption says it
        st.caption(escape_markdown(f"Read as {gold.convention}."))
    for warning in gold.warnings:
        st.warning(escape_markdown(warning))
    if skipped:
        why = {k: r for a in aligned.values() for k, r in a.skipped.items()}
        listed = "; ".join(f"pair {k}: {why[k]}" for k in sorted(skipped)[:5])
        more = f" (and {len(skipped) - 5} more)" if len(skipped) > 5 else ""
        st.warning(escape_markdown(f"{len(skipped)} pairs skipped, the model cannot read them: {listed}{more}"))
    for name, a in aligned.items():
        unk = a.with_unknown()
        if unk:
            who = f"{name}'s model" if len(aligned) > 1 else "this model"
            st.caption(escape_markdown(f"{len(unk)} of {len(gold.gold)} pairs hold a word {who} reads as <unk>."))


def _sentence(
    entries: dict[str, ModelEntry],
    labels: dict[str, str],
    method: Method,
    gold: GoldSet,
    predicted: dict,
    sentences: list[dict],
    image_format: str,
) -> None:
    """The per-sentence table and one chosen pair's maps (one per model) with gold and predicted links."""
    for row, src, tgt in zip(sentences, gold.sources, gold.targets, strict=True):
        row.update({"source": " ".join(src), "target": " ".join(tgt)})
    table = st.expander(
        "Per sentence: precision, recall and AER of each pair", key="explore_gold_table_open", on_change="rerun"
    )
    if table.open:  # lazy: the table is sent only when opened
        table.dataframe(pd.DataFrame(sentences), hide_index=True, key="explore_gold_sentences")
    n = len(gold.gold)
    if not 0 <= st.session_state.get(PAIR_KEY, 0) < n:
        st.session_state[PAIR_KEY] = 0
    left, right, toggle = st.columns([2, 3, 3], vertical_alignment="bottom")
    k = int(left.number_input(f"Pair (0-{n - 1})", 0, n - 1, key=PAIR_KEY, persist_state="session"))
    kinds = ["attention", *(["eflomal"] if "eflomal" in predicted else [])]
    if st.session_state.get(SHOW_KEY) not in kinds:
        st.session_state[SHOW_KEY] = kinds[0]
    kind = right.segmented_control("Predicted links of", kinds, key=SHOW_KEY, persist_state="session") or kinds[0]
    adapted = adapted_maps(labels, toggle)  # panel -> the adapted copy its map shows, when toggled
    src, tgt, g = gold.sources[k], gold.targets[k], gold.gold[k]
    stack = len(src) > 18
    width = panel_width(entries, stack=stack)
    shown: dict[str, tuple[str, object]] = {}  # per model: whose links, and its figure or why it has none
    for name, entry in entries.items():
        adapted_copy = adapted.get(name)
        who = (adapted_copy.label if adapted_copy else labels[name]) if kind == "attention" else "eflomal"
        if predicted[who][k] is None:
            shown[name] = who, f"Pair {k} was skipped: a model cannot read it (see the note above the table)."
            continue
        try:
            if adapted_copy:
                reading = adapted_copy.reading(src, tgt)
            else:
                reading, _ = word_links(model_version(entry), method, tuple(src), tuple(tgt))
        except AttnvizError as e:
            shown[name] = who, e
            continue
        title = f"{name} · {entry.name} · pair {k}: {who}"
        shown[name] = who, gold_figure(reading.weights, src, tgt, predicted[who][k], g.sure, g.possible, title, width)
    share_scales(
        align_tops([fig for _, fig in shown.values() if not isinstance(fig, str | AttnvizError)])
    )  # one colour scale
    for col, (name, (who, fig)) in zip(columns(entries, stack=stack), shown.items(), strict=True):
        with col:
            if isinstance(fig, str | AttnvizError):
                (st.info if isinstance(fig, str) else st.error)(escape_markdown(str(fig)))
                continue
            scores = " · ".join(f"{key.split()[-1]} {v:.3f}" for key, v in sentences[k].items() if key.startswith(who))
            st.caption(escape_markdown(f"Pair {k}, {who}: {scores}"))
            chart(fig, f"explore_gold_figure_{name}", image_format, f"gold-{k}", name)
    st.caption(
        "Under the links: each model's attention weights read on words, the end marker hidden. A hit is a predicted"
        " link in the gold (sure or possible), a wrong link one outside it, a miss a sure link not predicted."
    )
