"""Models and attention from outside attnviz: Hugging Face encoder-decoder folders, JoeyNMT
checkpoints, and attention matrices as files, each read into the same ``Alignment`` trace every
view draws."""

from attnviz.external.attention_export import attention_json, attention_npz
from attnviz.external.attention_file import (
    EXAMPLE_ATTENTION,
    MAX_ATTENTION_BYTES,
    AttentionFile,
    read_attention,
    read_attention_file,
)
from attnviz.external.file_links import matrix_names, score_files, word_links
from attnviz.external.joeynmt import checkpoint_bytes, import_joeynmt, import_joeynmt_files, import_joeynmt_zip

__all__ = [
    "EXAMPLE_ATTENTION",
    "MAX_ATTENTION_BYTES",
    "AttentionFile",
    "attention_json",
    "attention_npz",
    "checkpoint_bytes",
    "import_joeynmt",
    "import_joeynmt_files",
    "import_joeynmt_zip",
    "matrix_names",
    "read_attention",
    "read_attention_file",
    "score_files",
    "word_links",
]
