"""Models and attention from outside attnviz: Hugging Face encoder-decoder folders, JoeyNMT
checkpoints, and attention matrices as files, each read into the same ``Alignment`` trace every
view draws; and the files a trace is written as (attention files, CSV, Pharaoh)."""

from attnviz.external.attention_file import (
    EXAMPLE_ATTENTION,
    MAX_ATTENTION_BYTES,
    AttentionFile,
    read_attention,
    read_attention_file,
)
from attnviz.external.file_links import check_names, matrix_names, score_files, word_links
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
from attnviz.external.joeynmt import checkpoint_bytes, import_joeynmt, import_joeynmt_files, import_joeynmt_zip
from attnviz.external.markup_hf import carry_through, hf_markup
from attnviz.external.pieces import Grouping, group_pieces, word_marker
from attnviz.external.silver import (
    MARGIN,
    HeadRanking,
    HeadScore,
    hf_head_attention,
    rank_heads,
    silver_links,
    spearman,
)
from attnviz.external.trace import CrossAttention
from attnviz.external.trace_files import (
    attention_json,
    attention_npz,
    difference_csv,
    matrix_csv,
    matrix_frame,
    pair_csv,
    pair_json,
    pharaoh_text,
)

__all__ = [
    "EXAMPLE_ATTENTION",
    "MARGIN",
    "MAX_ATTENTION_BYTES",
    "MAX_UNPACKED_MB",
    "MAX_ZIP_MB",
    "AttentionFile",
    "CrossAttention",
    "Grouping",
    "HFModel",
    "HeadRanking",
    "HeadScore",
    "Info",
    "Pick",
    "attention_json",
    "attention_npz",
    "carry_through",
    "check_folder",
    "check_names",
    "checkpoint_bytes",
    "difference_csv",
    "every_pick",
    "force_words",
    "group_pieces",
    "head_aer",
    "hf_head_attention",
    "hf_markup",
    "import_joeynmt",
    "import_joeynmt_files",
    "import_joeynmt_zip",
    "links_of",
    "load_hf",
    "matrix_csv",
    "matrix_frame",
    "matrix_names",
    "model_root",
    "pair_csv",
    "pair_json",
    "parse_heads",
    "pharaoh_text",
    "rank_heads",
    "read_attention",
    "read_attention_file",
    "score_files",
    "score_picks",
    "silver_links",
    "spearman",
    "unpack_zip",
    "word_links",
    "word_marker",
    "word_reading",
    "word_stack",
]
