"""Data: built-in tasks with gold links, corpora read through `datasets`, tokenizers, BPE, vocabularies."""

from attnviz.data.bpe import MARK, copy_source_words, copyable, join_pieces, word_spans
from attnviz.data.corpora import clean_table_caches
from attnviz.data.multi30k import MULTI30K_ENV, default_multi30k, text_lines
from attnviz.data.pairs import Corpus, Link, Pair, Tokenizer, Vocab, Words, make_pair, to_pharaoh
from attnviz.data.scratch import own_folder, user_temp
from attnviz.data.spec import TASKS, is_file_spec, load_corpus, multi30k_pair, pair_options, task_pairs
from attnviz.data.streamed import summarize_spec
from attnviz.data.summary import pairs_frame, summarize
from attnviz.data.tables import table_columns
from attnviz.data.textcodec import as_utf8, bom_encoding, looks_binary
from attnviz.data.tokenize import HAN, show_direction_marks
from attnviz.data.toyfr import EXAMPLE, LEXICON
from attnviz.data.vocab import BOS_ID, EOS, EOS_ID, PAD_ID, UNK, UNK_ID

__all__ = [
    "BOS_ID",
    "EOS",
    "EOS_ID",
    "EXAMPLE",
    "HAN",
    "LEXICON",
    "MARK",
    "MULTI30K_ENV",
    "PAD_ID",
    "TASKS",
    "UNK",
    "UNK_ID",
    "Corpus",
    "Link",
    "Pair",
    "Tokenizer",
    "Vocab",
    "Words",
    "as_utf8",
    "bom_encoding",
    "clean_table_caches",
    "copy_source_words",
    "copyable",
    "default_multi30k",
    "is_file_spec",
    "join_pieces",
    "load_corpus",
    "looks_binary",
    "make_pair",
    "multi30k_pair",
    "own_folder",
    "pair_options",
    "pairs_frame",
    "show_direction_marks",
    "summarize",
    "summarize_spec",
    "table_columns",
    "task_pairs",
    "text_lines",
    "to_pharaoh",
    "user_temp",
    "word_spans",
]
