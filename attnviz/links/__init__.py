"""Word links from attention: reading a matrix as words, extraction, gold files, eflomal, the yardstick."""

from attnviz.links import textfile
from attnviz.links.display import common_steps, for_reading
from attnviz.links.dtw import DTW_WIDTH, dtw_links, dtw_matrix, dtw_path
from attnviz.links.eflomal import DIRECTIONS, SYMMETRIC, run_eflomal
from attnviz.links.extract import (
    DIRECTIONAL,
    METHODS,
    CorpusAlignment,
    WordAlignment,
    align_corpus,
    align_words,
    directional_links,
    read_words,
    threshold_links,
    word_attention,
    word_attentions,
)
from attnviz.links.goldfile import BASES, FORMATS, GoldFile, detect_format, parse_gold, parse_pharaoh
from attnviz.links.reading import Reading
from attnviz.links.textfile import is_bitext, sentence_pairs, text_lines
from attnviz.links.yardstick import (
    EFLOMAL_METHOD,
    SAMPLE_PAIRS,
    GoldSet,
    agreement,
    eflomal_links,
    gold_of_pairs,
    gold_of_upload,
    goldfile,
    reverse_entry,
    score_table,
    word_pairs,
)

__all__ = [
    "BASES",
    "DIRECTIONAL",
    "DIRECTIONS",
    "DTW_WIDTH",
    "EFLOMAL_METHOD",
    "FORMATS",
    "METHODS",
    "SAMPLE_PAIRS",
    "SYMMETRIC",
    "CorpusAlignment",
    "GoldFile",
    "GoldSet",
    "Reading",
    "WordAlignment",
    "agreement",
    "align_corpus",
    "align_words",
    "common_steps",
    "detect_format",
    "directional_links",
    "dtw_links",
    "dtw_matrix",
    "dtw_path",
    "eflomal_links",
    "for_reading",
    "gold_of_pairs",
    "gold_of_upload",
    "goldfile",
    "is_bitext",
    "parse_gold",
    "parse_pharaoh",
    "read_words",
    "reverse_entry",
    "run_eflomal",
    "score_table",
    "sentence_pairs",
    "text_lines",
    "textfile",
    "threshold_links",
    "word_attention",
    "word_attentions",
    "word_pairs",
]
