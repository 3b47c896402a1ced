"""Your model, Hugging Face folder: what the page computes once and keeps, shared by its parts (the heads
grid, the ranking, the markup). A decode is named by the tuple ``(path, version, label, text, reference,
beam, langs)``: the cached functions take it whole."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import streamlit as st

from attnviz.external import CrossAttention, HFModel, head_aer, load_hf, word_stack
from attnviz.links import GoldFile, parse_gold

if TYPE_CHECKING:
    import numpy as np


@st.cache_resource(max_entries=2, show_spinner=False)
def model(path: str, version: float, label: str) -> HFModel:
    """The model in ``path`` (``version``: its files' latest change, so an edited folder is read again);
    errors name the folder ``label``, what the user gave (never the server's path of an upload)."""
    return load_hf(path, label=label)


def version(folder: Path) -> float:
    """The latest change of the folder's files."""
    return max((p.stat().st_mtime for p in folder.iterdir() if p.is_file()), default=0.0)


@st.cache_data(max_entries=32, show_spinner=False)
def decode(path: str, version: float, label: str, text: str, reference: str, beam: int, langs: tuple) -> CrossAttention:
    """``text`` translated (or forced through ``reference``) by the model, its cross-attention kept."""
    hf = model(path, version, label)
    source_lang, target_lang = langs
    if reference:
        return hf.force(text, reference, source_lang, target_lang)
    return hf.translate(text, beam_size=beam, source_lang=source_lang, target_lang=target_lang)


@st.cache_data(max_entries=32, show_spinner=False)
def stack(key: tuple) -> tuple:
    """Every head of the decode ``decode(*key)`` read as words (external.word_stack), once per decode."""
    return word_stack(decode(*key))


def pair_gold(key: tuple, gold: tuple) -> GoldFile:
    """The pair's gold links (``gold``: the line, its format and base) over the decode's words; DataError
    when they are malformed or do not fit the convention."""
    _, src, tgt = stack(key)
    line, fmt, base = gold
    return parse_gold([line], [(len(src), len(tgt))], fmt, base, name="the gold links")


@st.cache_data(max_entries=64, show_spinner=False)
def aer(key: tuple, gold: tuple) -> np.ndarray:
    """Each head's AER ``[layers, heads]`` against the pair's gold links (:func:`pair_gold`)."""
    return head_aer(decode(*key), pair_gold(key, gold).alignments[0])
