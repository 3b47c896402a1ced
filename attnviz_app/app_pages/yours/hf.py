"""Your model: a Hugging Face encoder-decoder folder (MarianMT, T5, BART, mBART, NLLB, M2M100), by its
path on the server or uploaded as a zip, read offline. Translate or force a reference, find the
heads that align in a layer x head grid (scored against gold links when given), open one, compare
heads, and every shared view over them (attnviz_app/app_pages/yours/panel.py)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from attnviz.errors import AttnvizError, InputError
from attnviz.external import (
    MAX_ZIP_MB,
    CrossAttention,
    HFModel,
    Pick,
    check_folder,
    head_aer,
    load_hf,
    parse_heads,
    score_picks,
    unpack_zip,
    word_stack,
)
from attnviz.links import DIRECTIONAL, GoldFile, GoldSet, gold_of_upload, parse_gold, text_lines
from attnviz.plots import heads_grid, plot_config
from attnviz.server import server_folder
from attnviz.store import hf_roots
from attnviz_app.app_pages.shared.common import escape_markdown, get_model, session_models
from attnviz_app.app_pages.shared.gold_convention import gold_convention
from attnviz_app.app_pages.yours import panel

HOW_KEY, PATH_KEY, ZIP_KEY = "yours_hf_how", "yours_hf_path", "yours_hf_zip"
TEXT_KEY, REFERENCE_KEY, BEAM_KEY = "yours_hf_text", "yours_hf_reference", "yours_hf_beam"
SRC_LANG_KEY, TGT_LANG_KEY, GOLD_KEY = "yours_hf_src_lang", "yours_hf_tgt_lang", "yours_hf_gold"
LAYER_KEY, HEAD_KEY, COMPARE_KEY, GRID_KEY = "yours_hf_layer", "yours_hf_head", "yours_hf_compare", "yours_hf_grid"
ATTNVIZ_KEY = "yours_hf_attnviz"
RANK_GOLD_KEY, RANK_SRC_KEY, RANK_TGT_KEY = "yours_hf_rank_gold", "yours_hf_rank_src", "yours_hf_rank_tgt"
RANK_METHOD_KEY, RANK_KEY = "yours_hf_rank_method", "yours_hf_rank"  # RANK_KEY's convention: _format, _base
HOWS = ("Path on the server", "Upload a zip")
ALL = "all"
MAX_GRID_HEADS = 16 * 16


@st.cache_resource(max_entries=2, show_spinner=False)
def _model(path: str, version: float, label: str) -> HFModel:
    """The model in ``path`` (``version``: its files' latest change, so an edited folder is read again);
    errors name the folder ``label``, what the user gave (never the server's path of an upload)."""
    return load_hf(path, label=label)


@st.cache_data(max_entries=32, show_spinner=False)
def _decode(
    path: str, version: float, label: str, text: str, reference: str, beam: int, langs: tuple
) -> CrossAttention:
    model = _model(path, version, label)
    source_lang, target_lang = langs
    if reference:
        return model.force(text, reference, source_lang, target_lang)
    return model.translate(text, beam_size=beam, source_lang=source_lang, target_lang=target_lang)


@st.cache_data(max_entries=32, show_spinner=False)
def _word_stack(decode: tuple) -> tuple:
    """Every head of the decode ``_decode(*decode)`` read as words (external.word_stack), once per decode."""
    return word_stack(_decode(*decode))


def _pair_gold(decode: tuple, gold: tuple) -> GoldFile:
    """The pair's gold links (``gold``: the line, its format and base) over the decode's words; DataError
    when they are malformed or do not fit the convention."""
    _, src, tgt = _word_stack(decode)
    line, fmt, base = gold
    return parse_gold([line], [(len(src), len(tgt))], fmt, base, name="the gold links")


@st.cache_data(max_entries=64, show_spinner=False)
def _head_aer(decode: tuple, gold: tuple):
    """Each head's AER ``[layers, heads]`` against the pair's gold links (:func:`_pair_gold`)."""
    return head_aer(_decode(*decode), _pair_gold(decode, gold).alignments[0])


def _version(folder: Path) -> float:
    return max((p.stat().st_mtime for p in folder.iterdir() if p.is_file()), default=0.0)


def _folder() -> tuple[Path, str, str] | None:
    """The model folder the user gave, how messages name it (the path typed, or the upload's file
    name: no path of the server) and the model's name (None, with a note, until there is one);
    AttnvizError when it is not one."""
    how = st.segmented_control("Model folder", HOWS, default=HOWS[0], key=HOW_KEY) or HOWS[0]
    if how == HOWS[0]:
        text = st.text_input("Folder on the server", key=PATH_KEY, placeholder="/models/opus-mt-en-de",
                             help="A folder saved by save_pretrained: config.json, model.safetensors and the "
                             "tokenizer's files. Nothing is fetched from a hub.")  # fmt: skip
        if not text.strip():
            st.info("Give the path of a Hugging Face model folder on this server, or upload the folder as a zip.")
            return None
        folder = Path(text.strip()).expanduser().resolve()
        if not any(folder.is_relative_to(root) for root in hf_roots()):  # said before looking: no probing the disk
            raise InputError(
                "this server opens model folders only inside its models folder and the folders named by "
                "ATTNVIZ_HF_FOLDERS when it was started; whoever runs it can move or link the folder there (or "
                "add its parent to ATTNVIZ_HF_FOLDERS). Or upload the folder as a zip"
            )
        label, name = text.strip(), folder.name
    else:
        upload = st.file_uploader(f"The model folder as a zip (up to {MAX_ZIP_MB} MB)", type=["zip"], key=ZIP_KEY)
        if upload is None:
            st.info("Upload a zip of a model folder (zip -r model.zip FOLDER); bigger models: give their path.")
            return None
        unpacked = server_folder() / "hf"
        folder = unpack_zip(upload.getvalue(), unpacked)
        label = f"the upload {upload.name}"
        # a zip of the folder keeps the folder's name; a zip of its files is unpacked into a folder named by a hash
        name = Path(upload.name).stem if folder.parent == unpacked else folder.name
    check_folder(folder, label)
    return folder.resolve(), label, name


def _sentence(model: HFModel) -> tuple[str, str, int, tuple]:
    """The source, the reference to force (empty: translate), the beam size and the language codes."""
    text = st.text_input("Source sentence", key=TEXT_KEY, max_chars=2000, placeholder="Type a sentence, then Enter")
    left, right = st.columns([3, 1])
    reference = left.text_input("Force through a reference (optional)", key=REFERENCE_KEY, max_chars=2000,
                                help="Your translation: the attention while the decoder is forced through "
                                "it, to score against gold links. Empty: the model's own translation.")  # fmt: skip
    beam = right.number_input("Beam", 1, 8, 1, key=BEAM_KEY, disabled=bool(reference.strip()))
    langs = (None, None)
    codes = model.languages()
    if codes:
        a, b = st.columns(2)
        langs = (a.selectbox("Source language", [None, *codes], key=SRC_LANG_KEY),
                 b.selectbox("Target language", [None, *codes], key=TGT_LANG_KEY))  # fmt: skip
    return text.strip(), reference.strip(), int(beam), langs


def _open_clicked() -> None:
    """A click on a map of the grid opens that head in the pickers."""
    points = st.session_state[GRID_KEY].selection.get("points", [])
    data = points[0].get("customdata") if points else None
    if data:
        st.session_state[LAYER_KEY], st.session_state[HEAD_KEY] = int(data[0]), int(data[1])


def _grid(c: CrossAttention, decode: tuple, gold: tuple | None) -> None:
    """Every head as a small map, each titled with its AER when gold links are given; a click opens one."""
    if c.layers * c.heads > MAX_GRID_HEADS:
        st.caption(f"{c.layers} × {c.heads} heads are too many for one grid; pick them below.")
        return
    stack, src, tgt = _word_stack(decode)
    aer = None
    if gold:
        try:
            aer = _head_aer(decode, gold)
        except AttnvizError as e:
            st.error(escape_markdown(str(e)))
    layer, head = st.session_state.get(LAYER_KEY), st.session_state.get(HEAD_KEY)
    chosen = (layer, head) if isinstance(layer, int) and isinstance(head, int) else None
    fig = heads_grid(stack, src, tgt, aer, chosen)
    st.plotly_chart(fig, key=GRID_KEY, on_select=_open_clicked, selection_mode="points", width="content",
                    config=plot_config("attnviz-heads"))  # fmt: skip
    note = " Titles give each head's AER against the gold links (argmax links; the lowest in bold)."
    st.caption("Each map: rows are target words, columns source words, pieces merged, <eos> hidden."
               + (note if aer is not None else ""))  # fmt: skip


def _picks(c: CrossAttention) -> tuple[Pick, list[Pick]]:
    """The opened attention (layer and head pickers) and the heads to compare it with."""
    if st.session_state.get(LAYER_KEY) not in [ALL, *range(c.layers)]:
        st.session_state[LAYER_KEY] = ALL
    if st.session_state.get(HEAD_KEY) not in [ALL, *range(c.heads)]:
        st.session_state[HEAD_KEY] = ALL
    a, b, d = st.columns([1, 1, 3])
    layer = a.selectbox("Layer", [ALL, *range(c.layers)], key=LAYER_KEY, help="0-based; all: every layer averaged")
    head = b.selectbox("Head", [ALL, *range(c.heads)], key=HEAD_KEY, disabled=layer == ALL,
                       help="0-based; all: the layer's heads averaged")  # fmt: skip
    compare = d.text_input("Compare with heads (layer:head, up to 3)", key=COMPARE_KEY, placeholder="3:1 4:0",
                           help="Each listed head is shown beside the opened one on one colour scale.")  # fmt: skip
    opened = Pick() if layer == ALL else Pick(layer, None if head == ALL else head)
    others = [Pick(*pair) for pair in parse_heads(compare)[:3]] if compare.strip() else []
    return opened, others


@st.cache_data(max_entries=8, show_spinner=False)  # read for the convention's caption and for the ranking
def _gold_set(files: tuple, fmt: str, base: int | str) -> GoldSet:
    """The gold set of ``files`` (the gold, source and target files as ``(name, bytes)``) read in the
    convention ``fmt``, ``base``; DataError for a bad file."""
    (gold_name, gold), (src_name, src), (tgt_name, tgt) = files
    sentences = (text_lines(src, src_name), text_lines(tgt, tgt_name))
    return gold_of_upload(text_lines(gold, gold_name), gold_name, fmt, base, sentences, (src_name, tgt_name))


@st.cache_data(max_entries=8, show_spinner=False)
def _ranking(
    path: str, version: float, label: str, files: tuple, fmt: str, base: int | str, method: str
) -> tuple[list[dict], GoldSet]:
    """Every head, layer and the average scored against a gold set (``_gold_set(files, fmt, base)``), lowest
    AER first, and the gold set; DataError for a bad file."""
    gold_set = _gold_set(files, fmt, base)
    rows = score_picks(_model(path, version, label), gold_set.sources, gold_set.targets, gold_set.gold, method=method)
    return sorted(rows, key=lambda row: row["AER"]), gold_set


def _open_best(row: dict) -> None:
    st.session_state[LAYER_KEY] = ALL if row["layer"] is None else row["layer"]
    st.session_state[HEAD_KEY] = ALL if row["head"] is None else row["head"]


def _rank(folder: Path, label: str) -> None:
    """Every head ranked by AER on uploaded gold files, the best one opened with a click."""
    left, right = st.columns(2)
    gold = left.file_uploader("Gold alignment file", key=RANK_GOLD_KEY)
    src = right.file_uploader("Source sentences (tokenized, one per line)", key=RANK_SRC_KEY)
    tgt = right.file_uploader("Target sentences (tokenized, one per line)", key=RANK_TGT_KEY)
    files = tuple((f.name, f.getvalue()) for f in (gold, src, tgt)) if None not in (gold, src, tgt) else None
    read = (lambda f, b: _gold_set(files, f, b).convention) if files else None
    fmt, base = gold_convention(RANK_KEY, read, left)
    method = st.segmented_control("Links from attention", DIRECTIONAL, default="argmax", key=RANK_METHOD_KEY,
                                  help=panel.METHOD_HELP) or "argmax"  # fmt: skip
    if files is None:
        st.info("Upload a gold alignment file and its source and target sentences: every head is forced through "
                "each pair and scored, so you see which heads align.")  # fmt: skip
        return
    try:
        with st.spinner("Forcing every pair and scoring every head…"):
            rows, gold_set = _ranking(str(folder), _version(folder), label, files, fmt, base, method)
    except AttnvizError as e:
        st.error(escape_markdown(str(e)))
        return
    for warning in gold_set.warnings:
        st.warning(escape_markdown(warning))
    n = len(gold_set.gold)
    st.caption(escape_markdown(f"{n} pairs, {method} links on words, lowest AER first."))
    st.dataframe(pd.DataFrame(rows).drop(columns=["layer", "head"]), hide_index=True, key="yours_hf_rank_table",
                 height=260)  # fmt: skip
    st.button(f"Open the best: {rows[0]['attention']}", key="yours_hf_rank_open", on_click=_open_best,
              args=(rows[0],))  # fmt: skip


def _attnviz_model(text: str, target: str) -> dict:
    """An attnviz model chosen to compare with, forced through the same target: ``{name: Alignment}`` (empty
    when none is chosen or it cannot read the sentences, with a note)."""
    models = {entry.name: entry for entry in session_models()}
    name = st.selectbox("Compare with an attnviz model (forced through the same target)", [None, *sorted(models)],
                        key=ATTNVIZ_KEY, help="Shown beside the heads on one colour scale; its words must match "
                        "for the links to be compared.")  # fmt: skip
    if name is None or not target:
        return {}
    try:
        return {f"attnviz {name}": get_model(models[name]).align(text, target)}
    except AttnvizError as e:
        st.warning(escape_markdown(f"{name} cannot read this pair: {e}"))
        return {}


def render() -> None:
    try:
        given = _folder()
        if given is None:
            return
        folder, label, name = given
        with st.spinner("Loading the model…"):
            model = _model(str(folder), _version(folder), label)
    except AttnvizError as e:
        st.error(escape_markdown(str(e)))
        return
    info = model.info
    marker = f", words marked by {info.marker}" if info.marker else ""
    sizes = f"{info.layers} decoder layers × {info.heads} cross-attention heads, {info.parameters:,} parameters"
    read = f"{info.vocab_size:,} tokens{marker}. Read offline from {label}."
    st.caption(escape_markdown(f"{name}: {info.model_type}, {sizes}, {read}"))
    text, reference, beam, langs = _sentence(model)
    if not text:
        st.info("Type a source sentence and press Enter.")
        return
    try:
        with st.spinner("Decoding…"):
            decode = (str(folder), _version(folder), label, text, reference, beam, langs)
            c = _decode(*decode)
    except AttnvizError as e:
        st.error(escape_markdown(str(e)))
        return
    label = "Reference (forced)" if reference else "Translation"
    st.markdown(f"**{label}:** {escape_markdown(c.text) or '(empty)'}")
    if c.hypotheses:
        st.dataframe(pd.DataFrame([{"translation": h.text, "log-probability": round(h.log_prob, 3)}
                                   for h in c.hypotheses]), hide_index=True, key="yours_hf_nbest")  # fmt: skip
    gold_line = st.text_input("Gold links of this pair (over words)", key=GOLD_KEY, placeholder="0-0 1-2 2-1",
                              help=panel.GOLD_HELP).strip()  # fmt: skip
    gold = None  # the convention is asked once there are links to read
    if gold_line:
        gold = (gold_line, *gold_convention(GOLD_KEY, lambda f, b: _pair_gold(decode, (gold_line, f, b)).convention()))
    with st.expander("Heads: every layer × head", expanded=True):
        _grid(c, decode, gold)
    if st.toggle("Rank every head on a gold set (files)", key=RANK_KEY):
        with st.container(border=True):
            _rank(folder, label)
    try:
        opened, others = _picks(c)
        picks = [opened, *(p for p in others if p != opened)]
        alignments = {p.name: c.alignment(p.layer, p.head, list(p.heads) or None) for p in picks}
    except AttnvizError as e:
        st.error(escape_markdown(str(e)))
        return
    alignments |= _attnviz_model(text, reference or c.text)
    # the page asks for the pair's links (empty: none), so the panel does not ask again
    panel.show_alignments(alignments, "yours_hf_panel", gold=gold or ("", "auto", "auto"), default=list(alignments))
