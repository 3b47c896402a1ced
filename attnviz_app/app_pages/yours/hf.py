"""Your model: a Hugging Face encoder-decoder folder (MarianMT, T5, BART, mBART, NLLB, M2M100), by its
path on the server or uploaded as a zip, read offline. Translate or force a reference, find the
heads that align in a layer x head grid (scored against gold links when given; hf_heads.py) and by ranking
every head on sentence pairs against eflomal's links or gold (hf_rank.py), open one, compare heads, every
shared view over them (panel.py), and markup carried through the chosen heads (hf_markup.py)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from attnviz.errors import AttnvizError, InputError, refuse_url
from attnviz.external import MAX_ZIP_MB, HFModel, check_folder, unpack_zip
from attnviz.server import server_folder
from attnviz.store import hf_roots
from attnviz_app.app_pages.explore.sidebar import MAX_BEAM_WIDTH
from attnviz_app.app_pages.shared.common import error_text, escape_markdown, get_model, session_models
from attnviz_app.app_pages.shared.gold_convention import gold_convention
from attnviz_app.app_pages.yours import hf_cache, hf_heads, hf_markup, hf_rank, panel

HOW_KEY, PATH_KEY, ZIP_KEY = "yours_hf_how", "yours_hf_path", "yours_hf_zip"
TEXT_KEY, REFERENCE_KEY, BEAM_KEY = "yours_hf_text", "yours_hf_reference", "yours_hf_beam"
SRC_LANG_KEY, TGT_LANG_KEY, GOLD_KEY = "yours_hf_src_lang", "yours_hf_tgt_lang", "yours_hf_gold"
ATTNVIZ_KEY, MARKUP_KEY = "yours_hf_attnviz", "yours_hf_markup"
HOWS = ("Path on the server", "Upload a zip")


def _folder() -> tuple[Path, str, str] | None:
    """The model folder the user gave, how messages name it (the path typed, or the upload's file
    name: no path of the server) and the model's name (None, with a note, until there is one);
    AttnvizError when it is not one."""
    how = st.segmented_control("Model folder", HOWS, default=HOWS[0], key=HOW_KEY, persist_state="session") or HOWS[0]
    if how == HOWS[0]:
        text = st.text_input(
            "Folder on the server",
            key=PATH_KEY,
            placeholder="opus-mt-en-de",
            help="A folder saved by save_pretrained: config.json, model.safetensors and the "
            "tokenizer's files. A name or a relative path is looked for in the models folder; an absolute "
            "path must lie inside it or a folder of ATTNVIZ_HF_FOLDERS. Nothing is fetched from a hub.",
            persist_state="session",
        )
        if not text.strip():
            st.info("Give the path of a Hugging Face model folder on this server, or upload the folder as a zip.")
            return None
        refuse_url(text.strip(), "a Hugging Face model folder")
        roots = hf_roots()
        folder = Path(text.strip()).expanduser()
        folder = (folder if folder.is_absolute() else roots[0] / folder).resolve()  # a name: in the models folder
        if not any(folder.is_relative_to(root) for root in roots):  # said before looking: no probing the disk
            raise InputError(
                "This server opens model folders only inside its models folder (where a name or a relative path "
                "is looked for) and the folders named by ATTNVIZ_HF_FOLDERS when it was started; whoever runs it "
                "can move or link the folder there (or add its parent to ATTNVIZ_HF_FOLDERS). Or upload the "
                "folder as a zip."
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
    text = st.text_input(
        "Source sentence",
        key=TEXT_KEY,
        max_chars=2000,
        placeholder="Type a sentence, then Enter",
        persist_state="session",
    )
    left, right = st.columns([3, 1])
    reference = left.text_input(
        "Reference translation (optional)",
        key=REFERENCE_KEY,
        max_chars=2000,
        help="Your translation: the attention while the decoder is forced through "
        "it, to score against gold links. Empty: the model's own translation.",
        persist_state="session",
    )
    beam = right.number_input(
        "Beam width",
        1,
        MAX_BEAM_WIDTH,
        1,
        key=BEAM_KEY,
        disabled=bool(reference.strip()),
        help="1 = greedy. Above 1, the n-best list shows every beam. Off while a reference is forced.",
        persist_state="session",
    )
    langs = (None, None)
    codes = model.languages()
    if codes:
        a, b = st.columns(2)
        langs = (
            a.selectbox("Source language", [None, *codes], key=SRC_LANG_KEY, persist_state="session"),
            b.selectbox("Target language", [None, *codes], key=TGT_LANG_KEY, persist_state="session"),
        )
    return text.strip(), reference.strip(), int(beam), langs


def _attnviz_model(text: str, target: str) -> dict:
    """An attnviz model chosen to compare with, forced through the same target: ``{name: Alignment}`` (empty
    when none is chosen or it cannot read the sentences, with a note)."""
    models = {entry.name: entry for entry in session_models()}
    name = st.selectbox(
        "Compare with an attnviz model (forced through the same target)",
        [None, *sorted(models)],
        key=ATTNVIZ_KEY,
        help="Shown beside the heads on one colour scale; its words must match for the links to be compared.",
        persist_state="session",
    )
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
            model = hf_cache.model(str(folder), hf_cache.version(folder), label)
    except AttnvizError as e:
        st.error(error_text(e))
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
            decode = (str(folder), hf_cache.version(folder), label, text, reference, beam, langs)
            c = hf_cache.decode(*decode)
    except AttnvizError as e:
        st.error(error_text(e))
        return
    shown = "Reference (forced)" if reference else "Translation"  # `label` names the model in its messages
    st.markdown(f"**{shown}:** {escape_markdown(c.text) or '(empty)'}")
    if c.hypotheses:
        st.dataframe(
            pd.DataFrame([{"translation": h.text, "log-probability": round(h.log_prob, 3)} for h in c.hypotheses]),
            hide_index=True,
            key="yours_hf_nbest",
        )
    gold_line = st.text_input(
        "Gold links of this pair (over words)",
        key=GOLD_KEY,
        placeholder="0-0 1-2 2-1",
        help=panel.GOLD_HELP,
        persist_state="session",
    ).strip()
    gold = None  # the convention is asked once there are links to read
    if gold_line:
        found = lambda f, b: hf_cache.pair_gold(decode, (gold_line, f, b)).convention()  # noqa: E731
        gold = (gold_line, *gold_convention(GOLD_KEY, found))
    with st.expander("Heads: every layer × head", expanded=True):
        hf_heads.grid(c, decode, gold)
    if st.toggle(
        "Rank every head on sentence pairs (against eflomal's links, or gold)",
        key=hf_rank.RANK_KEY,
        persist_state="session",
    ):
        with st.container(border=True):
            hf_rank.rank(folder, label, c.layers, c.heads)
    try:
        opened, others = hf_heads.picks(c)
        picks = [opened, *(p for p in others if p != opened)]
        alignments = {p.name: c.alignment(p.layer, p.head, list(p.heads) or None) for p in picks}
    except AttnvizError as e:
        st.error(error_text(e))
        return
    alignments |= _attnviz_model(text, reference or c.text)
    # the page asks for the pair's links (empty: none), so the panel does not ask again
    panel.show_alignments(alignments, "yours_hf_panel", gold=gold or ("", "auto", "auto"), default=list(alignments))
    if st.toggle("Carry markup through the translation", key=MARKUP_KEY, persist_state="session"):
        with st.container(border=True):
            hf_markup.markup(decode, text, picks)
