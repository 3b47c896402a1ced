"""Models and attention from outside attnviz: Hugging Face encoder-decoder folders, JoeyNMT
checkpoints, and attention matrices as files, each read into the same ``Alignment`` trace every
view draws."""

from attnviz.external.folder import MAX_UNPACKED_MB, MAX_ZIP_MB, model_root, unpack_zip
from attnviz.external.hf import HFModel, Info, check_folder, load_hf
from attnviz.external.pieces import Grouping, group_pieces, word_marker
from attnviz.external.trace import CrossAttention

__all__: list[str] = [
    "MAX_UNPACKED_MB",
    "MAX_ZIP_MB",
    "CrossAttention",
    "Grouping",
    "HFModel",
    "Info",
    "check_folder",
    "group_pieces",
    "load_hf",
    "model_root",
    "unpack_zip",
    "word_marker",
]
