"""Your model, Hugging Face folder: every head ranked on uploaded sentence pairs, against eflomal's links of
the same pairs (silver: no gold needed, and the gold's AER beside it when a gold file is given) or against a
gold file alone (every head, layer and the average), so the user sees which heads align; the best head, or
the heads that align, opened with a click."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.external import MARGIN, HeadRanking, Pick, hf_head_attention, rank_heads, score_picks, silver_links
from attnviz.links import DIRECTIONAL, GoldSet, check_pairs, gold_of_upload, sentence_pairs, text_lines
from attnviz_app.app_pages.shared.common import error_text, escape_markdown
from attnviz_app.app_pages.shared.gold_convention import gold_convention
from attnviz_app.app_pages.yours import hf_cache, panel
from attnviz_app.app_pages.yours.hf_heads import ALL, MAX_COMPARED, compare_heads, open_head

RANK_KEY, AGAINST_KEY = "yours_hf_rank", "yours_hf_rank_against"  # RANK_KEY's convention: _format, _base
RANK_GOLD_KEY, RANK_SRC_KEY, RANK_TGT_KEY = "yours_hf_rank_gold", "yours_hf_rank_src", "yours_hf_rank_tgt"
RANK_METHOD_KEY, MARGIN_KEY = "yours_hf_rank_method", "yours_hf_rank_margin"
THRESHOLD_KEY, THRESHOLD = "yours_hf_rank_threshold", 0.3  # the threshold method's weight, as the panel's default
ALIGNING_KEY = "yours_hf_aligning"  # (model path, [(layer, head), ...]): the heads the last silver ranking found
AGAINST = {"silver": "eflomal's links (silver: no gold needed)", "gold": "a gold file only"}
SILVER_NOTE = (
    "Each head's word links scored against eflomal's links of the same pairs (grow-diag-final-and, words "
    "lowercased; eflomal learns from these pairs only, so more pairs give better silver links). Silver links count "
    "as sure links: a head's silver AER is 1 − F1 against eflomal."
)


def _heads(layers: int, heads: int) -> dict[str, tuple[int, int]]:
    """Each head's name as the ranking gives it -> ``(layer, head)``."""
    return {Pick(layer, head).name: (layer, head) for layer in range(layers) for head in range(heads)}


@st.cache_data(max_entries=8, show_spinner=False)  # read for the convention's caption and for the ranking
def _gold_set(files: tuple, fmt: str, base: int | str) -> GoldSet:
    """The gold set of ``files`` (the gold file and the sentences: a ``source ||| target`` file and ``None``,
    or the source and target files, each ``(name, bytes)``) read in the convention ``fmt``, ``base``;
    DataError for a bad file."""
    (gold_name, gold), (src_name, src), target = files
    tgt_name, tgt = target or (None, None)
    sentences = (text_lines(src, src_name), text_lines(tgt, tgt_name) if target else None)
    return gold_of_upload(text_lines(gold, gold_name), gold_name, fmt, base, sentences, (src_name, tgt_name))


@st.cache_data(max_entries=8, show_spinner=False)
def _ranking(
    path: str, version: float, label: str, files: tuple, fmt: str, base: int | str, method: str, threshold: float
) -> tuple[list[dict], GoldSet]:
    """Every head, layer and the average scored against a gold set (``_gold_set(files, fmt, base)``), lowest
    AER first, and the gold set; DataError for a bad file."""
    gold_set = _gold_set(files, fmt, base)
    model = hf_cache.model(path, version, label)
    rows = score_picks(model, gold_set.sources, gold_set.targets, gold_set.gold, method=method, threshold=threshold)
    return sorted(rows, key=lambda row: row["AER"]), gold_set


def _silver(
    path: str,
    version: float,
    label: str,
    files: tuple,
    gold: tuple | None,
    method: str,
    threshold: float,
    margin: float,
) -> tuple[HeadRanking, GoldSet | None]:
    """Every head ranked against eflomal's links of the pairs, and against the gold set when given. The
    links and the heads' attention are found once per model and pairs (:func:`_heads_and_silver`): another
    method, threshold or margin ranks the same heads against the same silver links."""
    sources, targets, gold_set = _pairs(files, gold)
    names, stacks, silver = _heads_and_silver(path, version, label, sources, targets)
    gold_links = gold_set.gold if gold_set else None
    return rank_heads(names, stacks, silver, gold_links, method, threshold, margin), gold_set


@st.cache_data(max_entries=4, show_spinner=False)
def _heads_and_silver(path: str, version: float, label: str, sources: list, targets: list) -> tuple[list, list, list]:
    """Every head's attention on the pairs as words, and eflomal's links of the pairs: found once per model
    and pairs (eflomal's sampler is not seeded: found again, its links and so the silver AERs would move)."""
    model = hf_cache.model(path, version, label)
    names, stacks = hf_head_attention(model, sources, targets)
    return names, stacks, silver_links(sources, targets)


def _pairs(files: tuple, gold: tuple | None) -> tuple[list, list, GoldSet | None]:
    """The sentence pairs to rank on (``files``: the pair files as ``_gold_set`` takes them, without the
    gold), as the gold set ``_gold_set(*gold)`` reads them when given, with that gold set."""
    gold_set = _gold_set(*gold) if gold else None
    if gold_set is not None:
        sources, targets = gold_set.sources, gold_set.targets
    else:
        (src_name, src), target = files
        tgt_name, tgt = target or (None, None)
        names = (src_name, tgt_name)
        sources, targets = sentence_pairs(
            text_lines(src, src_name), text_lines(tgt, tgt_name) if target else None, names
        )
        check_pairs(sources, targets, (src_name, tgt_name or src_name))
    return sources, targets, gold_set


def _uploads(against: str) -> tuple[tuple | None, tuple | None]:
    """The uploaded pair files (``((name, bytes), (name, bytes) | None)``, None until there are some) and the
    gold file (``(name, bytes)`` or None)."""
    left, right = st.columns(2)
    src = left.file_uploader(
        "Sentences: source, or a `source ||| target` bitext",
        key=RANK_SRC_KEY,
        help="One tokenized sentence per line, words separated by spaces; or a bitext alone (one "
        "`source ||| target` pair per line).",
    )
    tgt = left.file_uploader("Target sentences (not with a bitext)", key=RANK_TGT_KEY)
    optional = " (optional: scored beside silver)" if against == "silver" else ""
    gold = right.file_uploader(f"Gold alignment file{optional}", key=RANK_GOLD_KEY)
    pairs = None if src is None else ((src.name, src.getvalue()), (tgt.name, tgt.getvalue()) if tgt else None)
    return pairs, (gold.name, gold.getvalue()) if gold is not None else None


def rank(folder: Path, label: str, layers: int, heads: int) -> None:
    """The ranking's inputs and its table, with the best head (or the aligning heads) opened by a click."""
    against = (
        st.segmented_control(
            "Rank against",
            list(AGAINST),
            format_func=AGAINST.get,
            default="silver",
            key=AGAINST_KEY,
            persist_state="session",
        )
        or "silver"
    )
    pairs, gold = _uploads(against)
    files = (gold, *pairs) if gold and pairs else None
    left, middle, right = st.columns([3, 1, 1], vertical_alignment="bottom")
    method = (
        left.segmented_control(
            "Links from attention",
            DIRECTIONAL,
            default="argmax",
            key=RANK_METHOD_KEY,
            help=panel.METHOD_HELP,
            persist_state="session",
        )
        or "argmax"
    )
    threshold = THRESHOLD
    if method == "threshold":
        threshold = middle.number_input(
            "Threshold",
            0.05,
            1.0,
            THRESHOLD,
            0.05,
            key=THRESHOLD_KEY,
            help="A link for every cell whose weight on words reaches this.",
            persist_state="session",
        )
    fmt, base = "auto", "auto"
    if gold:
        read = (lambda f, b: _gold_set(files, f, b).convention) if files else None
        fmt, base = gold_convention(RANK_KEY, read, st)
    if against == "silver":
        margin = right.number_input(
            "Margin",
            0.0,
            1.0,
            MARGIN,
            0.01,
            key=MARGIN_KEY,
            help="A head aligns when its silver AER is this far below the median of all the heads.",
            persist_state="session",
        )
        if pairs is None:
            st.info(
                "Upload sentence pairs: eflomal aligns them, every head is forced through each pair and scored "
                "against eflomal's links, so you see which heads align without gold."
            )
            return
        links = (method, threshold, margin)
        _show_silver(folder, label, pairs, (files, fmt, base) if gold else None, links, (layers, heads))
        return
    if files is None:
        st.info(
            "Upload a gold alignment file and its sentence pairs: every head is forced through each pair and "
            "scored, so you see which heads align."
        )
        return
    _show_gold(folder, label, files, fmt, base, method, threshold)


def _show_gold(
    folder: Path, label: str, files: tuple, fmt: str, base: int | str, method: str, threshold: float
) -> None:
    try:
        with st.spinner("Forcing every pair and scoring every head…"):
            version = hf_cache.version(folder)
            rows, gold_set = _ranking(str(folder), version, label, files, fmt, base, method, threshold)
    except AttnvizError as e:
        st.error(error_text(e))
        return
    for warning in gold_set.warnings:
        st.warning(escape_markdown(warning))
    st.caption(escape_markdown(f"{len(gold_set.gold)} pairs, {_links(method, threshold)} on words, lowest AER first."))
    st.dataframe(
        pd.DataFrame(rows).drop(columns=["layer", "head", "F1"]), hide_index=True, key="yours_hf_rank_table", height=260
    )
    best = rows[0]
    layer, head = (ALL if best[k] is None else best[k] for k in ("layer", "head"))
    st.button(f"Open the best: {best['attention']}", key="yours_hf_rank_open", on_click=open_head, args=(layer, head))


def _links(method: str, threshold: float) -> str:
    return f"threshold links ({threshold:g})" if method == "threshold" else f"{method} links"


def _show_silver(
    folder: Path, label: str, pairs: tuple, gold: tuple | None, links: tuple[str, float, float], size: tuple[int, int]
) -> None:
    method, threshold, margin = links
    try:
        with st.spinner("Aligning the pairs with eflomal, forcing every pair and scoring every head…"):
            version = hf_cache.version(folder)
            ranking, gold_set = _silver(str(folder), version, label, pairs, gold, method, threshold, margin)
    except AttnvizError as e:
        st.error(error_text(e))
        return
    for warning in gold_set.warnings if gold_set else ():
        st.warning(escape_markdown(warning))
    heads = _heads(*size)
    aligning = [heads[name] for name in ranking.aligning]
    st.session_state[ALIGNING_KEY] = (str(folder), aligning)
    st.caption(
        escape_markdown(
            f"{ranking.pairs} pairs, {_links(method, threshold)} on words, lowest silver AER first. " + SILVER_NOTE
        )
    )
    table = pd.DataFrame(ranking.to_dict()["rows"]).rename(
        columns={"silver_aer": "silver AER", "gold_aer": "gold AER", "aligns": "aligns"}
    )
    if gold_set is None:
        table = table.drop(columns=["gold AER"])
    st.dataframe(table, hide_index=True, key="yours_hf_silver_table", height=260)
    names = ", ".join(ranking.aligning) or "none stands out"
    st.markdown(escape_markdown(f"Heads that align ({ranking.rule}): {names}."))
    if gold_set is not None:
        st.caption(
            escape_markdown(
                f"Spearman's rank correlation of the silver and gold AERs over {ranking.counted}: "
                f"{ranking.spearman_text}."
            )
        )
    a, b = st.columns(2)
    best = heads[ranking.heads[0].name]
    a.button(f"Open the best: {ranking.heads[0].name}", key="yours_hf_silver_open", on_click=open_head, args=best)
    if aligning:
        b.button(
            f"Compare the heads that align (up to {MAX_COMPARED + 1})",
            key="yours_hf_silver_compare",
            on_click=_open_aligning,
            args=(aligning,),
        )


def _open_aligning(aligning: list[tuple[int, int]]) -> None:
    """The first aligning head opened, the next ones compared with it."""
    open_head(*aligning[0])
    compare_heads(aligning[1:])
