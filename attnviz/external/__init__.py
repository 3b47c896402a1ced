"""Models and attention from outside attnviz: Hugging Face encoder-decoder folders, JoeyNMT
checkpoints, and attention matrices as files, each read into the same ``Alignment`` trace every
view draws."""

from attnviz.external.folder import MAX_UNPACKED_MB, MAX_ZIP_MB, model_root, unpack_zip
from attnviz.external.heads import (
    Pick,
    every_pick,
    force_words,
    head_aer,
    links_of,
    parse_heads,
    score_picks,
    word_reading,
    word_stack,
)
from attnviz.external.hf import HFModel, Info, check_folder, load_hf
from attnviz.external.pieces import Grouping, group_pieces, word_marker
from attnviz.external.trace import CrossAttention

__all__ = [
    "MAX_UNPACKED_MB",
    "MAX_ZIP_MB",
    "CrossAttention",
    "Grouping",
    "HFModel",
    "Info",
    "Pick",
    "check_folder",
    "every_pick",
    "force_words",
    "group_pieces",
    "head_aer",
    "links_of",
    "load_hf",
    "model_root",
    "parse_heads",
    "score_picks",
    "unpack_zip",
    "word_marker",
    "word_reading",
    "word_stack",
]
