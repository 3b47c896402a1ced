"""Word links from attention: reading a matrix as words, extraction, gold files, eflomal, the yardstick."""

from attnviz.links.display import common_steps, for_reading
from attnviz.links.dtw import DTW_WIDTH, dtw_links, dtw_matrix, dtw_path
from attnviz.links.eflomal import DIRECTIONS, SYMMETRIC, run_eflomal
from attnviz.links.extract import (
    DIRECTIONAL,
    METHODS,
    WordAlignment,
    align_corpus,
    align_words,
    directional_links,
    read_words,
    threshold_links,
    word_attention,
)
from attnviz.links.goldfile import FORMATS, parse_pharaoh, text_lines
from attnviz.links.reading import Reading
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
    "DIRECTIONAL",
    "DIRECTIONS",
    "DTW_WIDTH",
    "EFLOMAL_METHOD",
    "FORMATS",
    "METHODS",
    "SAMPLE_PAIRS",
    "SYMMETRIC",
    "GoldSet",
    "Reading",
    "WordAlignment",
    "agreement",
    "align_corpus",
    "align_words",
    "common_steps",
    "directional_links",
    "dtw_links",
    "dtw_matrix",
    "dtw_path",
    "eflomal_links",
    "for_reading",
    "gold_of_pairs",
    "gold_of_upload",
    "goldfile",
    "parse_pharaoh",
    "read_words",
    "reverse_entry",
    "run_eflomal",
    "score_table",
    "text_lines",
    "threshold_links",
    "word_attention",
    "word_pairs",
]
