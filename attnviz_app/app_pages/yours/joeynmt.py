"""Your model: a JoeyNMT 2.x recurrent checkpoint, converted to an attnviz model in memory, its
attention on a typed sentence, and the converted checkpoint to download."""

from __future__ import annotations

import hashlib

import streamlit as st

from attnviz.decoding import Translator
from attnviz.devices import use_server_threads
from attnviz.errors import AttnvizError
from attnviz.external import checkpoint_bytes, import_joeynmt, import_joeynmt_zip
from attnviz_app.app_pages.explore.sidebar import MAX_BEAM_WIDTH
from attnviz_app.app_pages.shared.common import error_text, escape_markdown
from attnviz_app.app_pages.yours.panel import show_alignments

KEY = "yours_joey"
MAX_MB = 50  # per uploaded file; the server's own limit may be lower


@st.cache_resource(max_entries=4, show_spinner="Converting the JoeyNMT model…")
def _convert(digest: str, _files: dict[str, bytes]) -> Translator:
    """One shared, read-only converted model per set of uploaded files (``digest`` is their hash)."""
    if "zip" in _files:
        return import_joeynmt_zip(_files["zip"], _files["zip_name"].decode())
    lines = {k: _files[k].decode("utf-8", errors="strict").splitlines() for k in ("src", "trg")}
    return import_joeynmt(_files["config"].decode("utf-8"), lines["src"], lines["trg"], _files["ckpt"], "joeynmt")


@st.cache_data(max_entries=4, show_spinner=False)
def _download(digest: str, _model: Translator) -> bytes:
    return checkpoint_bytes(_model)


def _uploads() -> dict[str, bytes] | None:
    kind = st.radio(
        "Upload",
        ["A zip of the model folder", "Its files one by one"],
        horizontal=True,
        key=f"{KEY}_kind",
        persist_state="session",
    )
    if kind.startswith("A zip"):
        z = st.file_uploader("Model folder (.zip)", type=["zip"], key=f"{KEY}_zip")
        picked = {"zip": z}
    else:
        c1, c2 = st.columns(2)
        picked = {
            "config": c1.file_uploader("config.yaml", type=["yaml", "yml"], key=f"{KEY}_config"),
            "ckpt": c2.file_uploader("Checkpoint (.ckpt)", type=["ckpt", "pt"], key=f"{KEY}_ckpt"),
            "src": c1.file_uploader("src_vocab.txt", type=["txt"], key=f"{KEY}_src"),
            "trg": c2.file_uploader("trg_vocab.txt", type=["txt"], key=f"{KEY}_trg"),
        }
    if any(f is None for f in picked.values()):
        st.info("Upload the model: its config.yaml, both vocabulary files and the .ckpt, or the folder as a zip.")
        return None
    big = next((f for f in picked.values() if f.size > MAX_MB * 2**20), None)
    if big is not None:
        st.error(f"{escape_markdown(big.name)} is {big.size / 2**20:.0f} MB, above the {MAX_MB} MB limit per file.")
        return None
    files = {k: f.getvalue() for k, f in picked.items()}
    if "zip" in files:
        files["zip_name"] = picked["zip"].name.encode()
    return files


def render() -> None:
    st.markdown(
        "A recurrent JoeyNMT 2.x model (GRU or LSTM, word or character level) becomes an attnviz model whose "
        "attention equals JoeyNMT's. JoeyNMT's `bahdanau` and `luong` attention are attnviz's additive and general "
        "scores; JoeyNMT's decoder is always Luong-style. The checkpoint is read as tensors only: a "
        "file that needs code to load is refused. From the shell: `attnviz import-joeynmt config.yaml --out NAME`."
    )
    files = _uploads()
    if files is None:
        return
    digest = hashlib.sha256(b"".join(files[k] for k in sorted(files))).hexdigest()
    try:
        model = _convert(digest, files)
    except (AttnvizError, UnicodeDecodeError) as e:
        st.error(error_text(e) if isinstance(e, AttnvizError) else "A vocabulary or config file is not UTF-8 text.")
        return
    cfg = model.config
    st.caption(
        f"JoeyNMT {escape_markdown(model.meta['joeynmt_attention'])} attention: attnviz {cfg.score} score, "
        "Luong-style decoder, "
        f"{cfg.encoder.upper()} encoder, {cfg.cell.upper()} decoder, {model.model.num_parameters():,} parameters, "
        f"vocabularies {cfg.src_vocab_size:,} / {cfg.tgt_vocab_size:,}."
    )
    st.download_button(
        "Download as attnviz .safetensors",
        _download(digest, model),
        "joeynmt.safetensors",
        "application/octet-stream",
        key=f"{KEY}_download",
    )
    text = st.text_input(
        "Source sentence", key=f"{KEY}_text", placeholder="Type a sentence and press Enter", persist_state="session"
    )
    c1, c2 = st.columns([3, 1])
    reference = c1.text_input(
        "Reference translation (optional)",
        key=f"{KEY}_reference",
        help="Your own translation: the model is forced through it, so its attention can be scored against gold links",
        persist_state="session",
    )
    beam = c2.number_input(
        "Beam width",
        min_value=1,
        max_value=MAX_BEAM_WIDTH,
        value=1,
        key=f"{KEY}_beam",
        help="1 = greedy. Above 1, every hypothesis of the n-best list has its map.",
        persist_state="session",
    )
    if not text:
        st.info("Type a sentence in the model's source language.")
        return
    use_server_threads()
    try:
        shown = _decodes(model, text, reference, int(beam))
    except AttnvizError as e:
        st.error(error_text(e))
        return
    show_alignments(shown, KEY)


def _decodes(model: Translator, text: str, reference: str, beam: int) -> dict:
    """The named traces of one sentence: the search's best (and its n-best), and the forced reference."""
    best = model.translate(text, beam_size=beam, n_best=beam if beam > 1 else None)
    name = "greedy" if beam == 1 else f"beam {beam}"
    shown = {name: best}
    for k, hyp in enumerate(best.hypotheses[1:], start=2):
        shown[f"{name} · hypothesis {k}"] = hyp
    if reference.strip():
        shown = {"reference (forced)": model.align(text, reference), **shown}
    return shown
