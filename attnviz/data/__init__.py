"""Data: tokenizers, vocabularies, built-in tasks with gold alignments and real corpora."""

from attnviz.data.corpora import DEFAULT_MULTI30K, load_hub, load_multi30k, load_table, network_available, table_columns
from attnviz.data.pairs import Corpus, Pair, from_pharaoh, make_pair, to_pharaoh
from attnviz.data.spec import TASKS, load_corpus
from attnviz.data.summary import pairs_frame, summarize
from attnviz.data.tokenize import Tokenizer
from attnviz.data.toyfr import LEXICON, unknown_words
from attnviz.data.vocab import Vocab

__all__ = [
    "DEFAULT_MULTI30K",
    "LEXICON",
    "TASKS",
    "Corpus",
    "Pair",
    "Tokenizer",
    "Vocab",
    "from_pharaoh",
    "load_corpus",
    "load_hub",
    "load_multi30k",
    "load_table",
    "make_pair",
    "network_available",
    "pairs_frame",
    "summarize",
    "table_columns",
    "to_pharaoh",
    "unknown_words",
]
