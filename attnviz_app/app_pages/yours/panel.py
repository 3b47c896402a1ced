"""Your model: the views every source shares, over named ``Alignment`` traces (one per layer, head,
hypothesis or model): the heatmap with hover (several side by side on one scale to compare them),
the per-step animation, word links extracted from attention (argmax, threshold, Whisper's DTW)
scored against gold links pasted for the pair, and the exports."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import streamlit as st

from attnviz.decoding import Alignment
from attnviz.errors import AttnvizError
from attnviz.external import attention_json, matrix_csv, pharaoh_text
from attnviz.links import (
    DIRECTIONAL,
    GoldAlignment,
    GoldFile,
    directional_links,
    for_reading,
    parse_gold,
    read_words,
    score_table,
)
from attnviz.plots import (
    explore_heatmap,
    gold_figure,
    heatmap_rows,
    links_figure,
    plot_config,
    step_animation,
)
from attnviz.store import file_stem
from attnviz_app.app_pages.explore.screen import page_width
from attnviz_app.app_pages.shared.common import error_text, escape_markdown
from attnviz_app.app_pages.shared.gold_convention import gold_convention
from attnviz_app.app_pages.shared.reading_ui import EOS_HELP, EOS_LABEL, MERGE_LABEL

if TYPE_CHECKING:
    import plotly.graph_objects as go

ONE_WIDTH = 860  # px: the widest one map is drawn
MAX_COMPARED = 4
VIEWS = ("Heatmap", "Per step", "Word links and gold", "Export")
METHOD_HELP = (
    "argmax: each target word linked to the source word it attends to most. threshold: every cell whose weight "
    "reaches the threshold. dtw (dynamic time warping, as Whisper times its words): the cheapest monotonic path "
    "through the attention (standardised per source word); with several maps shown, their average is one more row."
)
GOLD_HELP = (
    "Gold links of this pair, counted over the words the maps show (pieces merged, <eos> left out): Pharaoh or talp "
    "`i-j` a sure link from source word i to target word j (possible: Pharaoh `i?j` or `i-j-P`, talp `ipj`), or one "
    "NAACL link `sent_id i j [S|P]`. Say the format and index base below, or leave them to auto-detect."
)


def _chart(fig: go.Figure, key: str, name: str) -> None:
    st.plotly_chart(fig, key=key, width="content", config=plot_config(f"attnviz-{name}"))


def show_alignments(
    alignments: dict, key: str, gold: tuple[str, str, int | str] | None = None, default: list[str] | None = None
) -> None:
    """The shared views over ``alignments`` (name -> ``Alignment``): the user picks one, or up to
    :data:`MAX_COMPARED` to compare side by side on one colour scale (``default``: those shown first,
    and again whenever it changes). ``gold``: the pair's gold links given by the page, ``(line, fmt, base)``
    as :func:`attnviz_app.app_pages.shared.gold_convention.gold_convention` asks them (``None``: the
    panel asks for them)."""
    if not alignments:
        st.info("Nothing to show.")
        return
    names = list(alignments)
    pick_key, default_key = f"{key}_matrix", f"{key}_matrix_default"
    default = [n for n in (default or names[:1]) if n in alignments][:MAX_COMPARED] or names[:1]
    stored = st.session_state.get(pick_key)
    if not stored or not set(stored) <= set(names) or st.session_state.get(default_key) != default:
        st.session_state[pick_key] = default
    st.session_state[default_key] = default
    # the choice takes the page's width: in a narrower column, four names side by side are cut
    chosen = (
        st.multiselect(
            "Attention shown (several: side by side on one scale, in rows)",
            names,
            key=pick_key,
            max_selections=MAX_COMPARED,
            persist_state="session",
        )
        if len(names) > 1
        else names
    )
    if not chosen:
        st.info("Choose the attention to show.")
        return
    first, second = st.columns(2)
    merge = first.toggle(
        MERGE_LABEL,
        value=True,
        key=f"{key}_merge",
        help="A source word's columns are summed and a target word's rows averaged. On at first here, unlike "
        "Explore: most outside models cut nearly every word into pieces.",
        persist_state="session",
    )
    hide = second.toggle(
        EOS_LABEL,
        value=False,
        key=f"{key}_hide",
        help=EOS_HELP,
        persist_state="session",
    )
    shown = {}
    for name in chosen:
        reading = for_reading(alignments[name], hide and alignments[name].source_tokens[-1:] == ["<eos>"], merge)
        shown[name] = (alignments[name], reading)
    view = st.segmented_control("View", VIEWS, default=VIEWS[0], key=f"{key}_view", persist_state="session") or VIEWS[0]
    if view == "Heatmap":
        _heatmaps({n: r.alignment for n, (_, r) in shown.items()}, key)
        rule = next(iter(shown.values()))[1].rule
        st.caption(escape_markdown(rule) + " Hover a cell for its weight.")
    elif view == "Per step":
        name = (
            chosen[0] if len(chosen) == 1 else st.selectbox("Of", chosen, key=f"{key}_step_of", persist_state="session")
        )
        _chart(step_animation(shown[name][1].alignment), f"{key}_steps", "steps")
        st.caption("Play, or drag the slider: each decoder step's attention over the source.")
    elif view == "Word links and gold":
        _links({n: al for n, (al, _) in shown.items()}, key, gold)
    else:
        _exports({n: al for n, (al, _) in shown.items()}, key)


def _heatmaps(panels: dict[str, Alignment], key: str) -> None:
    """One map across the page, or several in one figure: as many side by side as stay readable in the
    page's width, the rest in further rows, on one colour scale with one colour bar."""
    width = min(ONE_WIDTH, page_width())
    if len(panels) == 1:
        name, al = next(iter(panels.items()))
        _chart(explore_heatmap(al, title=name, max_width=width), f"{key}_map_0", "map")
        return
    _chart(heatmap_rows(panels, page_width()), f"{key}_maps", "maps")


def _gold(key: str, n_src: int, n_tgt: int, given: tuple[str, str, int | str] | None) -> GoldAlignment | None:
    """The gold links as a ``GoldAlignment``: ``given`` by the page as ``(line, fmt, base)``, or pasted here
    with the convention asked beside them; ``None`` when there are none, DataError when they are malformed
    or do not fit the convention."""

    def read(line: str, fmt: str, base: int | str) -> GoldFile:
        return parse_gold([line], [(n_src, n_tgt)], fmt, base, name="the gold links")

    if given is None:
        line = st.text_input(
            "Gold links", key=f"{key}_gold", placeholder="0-0 1-2 2-1", help=GOLD_HELP, persist_state="session"
        ).strip()
        if not line:  # the convention is asked once there are links to read
            return None
        given = (line, *gold_convention(f"{key}_gold", lambda f, b: read(line, f, b).convention()))
    return read(*given).alignments[0] if given[0] else None


def _links(panels: dict[str, Alignment], key: str, given_gold: tuple | None) -> None:
    """Each shown attention's word links, with the gold links' precision, recall and AER when pasted."""
    left, right = st.columns([2, 1], vertical_alignment="bottom")
    method = (
        left.segmented_control(
            "Links from attention",
            DIRECTIONAL,
            default="argmax",
            key=f"{key}_method",
            help=METHOD_HELP,
            persist_state="session",
        )
        or "argmax"
    )
    threshold = 0.3
    if method == "threshold":
        threshold = right.slider("Threshold", 0.05, 1.0, 0.3, 0.05, key=f"{key}_threshold", persist_state="session")
    try:
        readings = {name: read_words(al) for name, al in panels.items()}
        first = next(iter(readings.values()))
        sizes = {(len(r.source_words), len(r.target_words)) for r in readings.values()}
        links = {name: sorted(directional_links(r.weights, method, threshold)) for name, r in readings.items()}
        if method == "dtw" and len(readings) > 1 and len(sizes) == 1:
            stack = np.stack([r.weights for r in readings.values()])  # [maps, tgt_words, src_words]
            links["DTW over the maps shown"] = sorted(directional_links(stack, "dtw"))
            readings["DTW over the maps shown"] = first
        gold = _gold(key, len(first.source_words), len(first.target_words), given_gold)
    except AttnvizError as e:
        st.error(error_text(e))
        return
    if gold is not None and len(sizes) > 1:
        st.warning("The maps shown read different words (different translations): gold scores only the first.")
    if gold is not None:
        scored = {
            name: [links[name]]
            for name, r in readings.items()
            if (len(r.source_words), len(r.target_words)) == (len(first.source_words), len(first.target_words))
        }
        corpus, _ = score_table([gold], scored)
        st.dataframe(pd.DataFrame(corpus).drop(columns=["F1"]), hide_index=True, key=f"{key}_scores")
        st.caption(
            "AER = 1 − (|A∩S| + |A∩P|) / (|A| + |S|), precision = |A∩P| / |A|, recall = |A∩S| / |S| "
            "(Och & Ney 2003), on words."
        )
    names = list(links)
    name = (
        names[0]
        if len(names) == 1
        else st.selectbox("Links drawn", names, key=f"{key}_links_of", persist_state="session")
    )
    r = readings[name]
    title = f"{name}: {method} links" + (" against gold" if gold is not None else "")
    if gold is not None and (len(r.source_words), len(r.target_words)) == (
        len(first.source_words),
        len(first.target_words),
    ):
        fig = gold_figure(
            r.weights, r.source_words, r.target_words, links[name], gold.sure, gold.possible, title, ONE_WIDTH
        )
    else:
        fig = links_figure(
            r.weights, r.source_words, r.target_words, {name: ("attention", links[name])}, title, ONE_WIDTH
        )
    _chart(fig, f"{key}_links_map", "links")
    st.caption(escape_markdown(r.caption))
    pharaoh = " ".join(f"{s}-{t}" for s, t in links[name])
    st.code(pharaoh or "(no links)", language=None, wrap_lines=True)


def _file_name(name: str, al: Alignment, suffix: str) -> str:
    """A download's name: the matrix's name and the sentence's source words, each with a hash of it where its
    letters have no ASCII spelling (``注意力``), so two matrices or two sentences never share one."""
    words = al.source_tokens[:-1] if al.source_tokens[-1:] == ["<eos>"] else al.source_tokens
    return f"{file_stem('', name)}-{file_stem('', ' '.join(words))}{suffix}"


def _exports(panels: dict[str, Alignment], key: str) -> None:
    """Each shown attention as JSON (the whole trace), CSV (the weights) and Pharaoh (argmax links)."""
    for k, (name, al) in enumerate(panels.items()):
        st.markdown(f"**{escape_markdown(name)}**")
        files = (
            ("JSON (whole trace)", attention_json({name: al}), "json", "application/json"),
            ("CSV (weights)", matrix_csv(al), "csv", "text/csv"),
            ("Pharaoh (argmax, words)", pharaoh_text(al), "pharaoh", "text/plain"),
        )
        for col, (label, data, ext, mime) in zip(st.columns(3), files, strict=True):
            file_name = _file_name(name, al, f".{ext}")
            col.download_button(label, data, file_name=file_name, mime=mime, key=f"{key}_{ext}_{k}", on_click="ignore")
