"""The "Merge subword pieces into words" option of Explore and Compare, shown only for models with pieces."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.store import read_header

if TYPE_CHECKING:
    from types import ModuleType

    from streamlit.delta_generator import DeltaGenerator

MERGE_LABEL = "Merge subword pieces into words"
EOS_LABEL = "Hide <eos> and renormalise"
EOS_HELP = (
    "Much attention often parks on the source's end marker; hiding its column and rescaling each row over the "
    "words to the total it had (1; less for local-p) makes the word-to-word links easier to see."
)
MERGE_HELP = (
    "This model cuts rare words into pieces (`orange@@ farbenen`). Merged, a source word's columns are summed "
    "(the attention the word received) and a target word's rows averaged, so each row keeps its total (1; less "
    "for local-p); the rule is stated under the figure."
)


@st.cache_data(max_entries=256, show_spinner=False)
def has_pieces(path: str) -> bool:
    """Whether a checkpoint cuts either side into subword pieces (its tokenizer has BPE merges), from its header."""
    try:
        header = read_header(Path(path))
    except (AttnvizError, OSError):
        return False
    return any((header.get(side) or {}).get("merges") for side in ("src_tokenizer", "tgt_tokenizer"))


def merge_toggle(key: str, paths: list[str], where: DeltaGenerator | ModuleType = st) -> bool:
    """The merge toggle in ``where`` (``st.sidebar``), only when a model of ``paths`` has pieces; else off."""
    if not any(has_pieces(p) for p in paths):
        return False
    return where.toggle(MERGE_LABEL, key=key, persist_state="session", help=MERGE_HELP)
