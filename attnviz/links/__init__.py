"""Word links from attention: reading a matrix as words, extraction, gold files, eflomal, the yardstick, and
markup carried along the links."""

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
)
from attnviz.links.goldfile import BASES, FORMATS, GoldFile, detect_format, parse_gold, parse_pharaoh
from attnviz.links.markup import INLINE, MAX_ELEMENTS, MAX_MARKUP_CHARS, VOID, Element, Markup, parse_markup
from attnviz.links.markup_carry import FLAGS, SPLIT_RULES, MarkupResult, Span, carry_markup
from attnviz.links.markup_translate import MARKUP_METHODS, eflomal_sample, translate_markup, words_of
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
    "FLAGS",
    "FORMATS",
    "INLINE",
    "MARKUP_METHODS",
    "MAX_ELEMENTS",
    "MAX_MARKUP_CHARS",
    "METHODS",
    "SAMPLE_PAIRS",
    "SPLIT_RULES",
    "SYMMETRIC",
    "VOID",
    "CorpusAlignment",
    "Element",
    "GoldFile",
    "GoldSet",
    "Markup",
    "MarkupResult",
    "Reading",
    "Span",
    "WordAlignment",
    "agreement",
    "align_corpus",
    "align_words",
    "carry_markup",
    "common_steps",
    "detect_format",
    "directional_links",
    "dtw_links",
    "dtw_matrix",
    "dtw_path",
    "eflomal_links",
    "eflomal_sample",
    "for_reading",
    "gold_of_pairs",
    "gold_of_upload",
    "goldfile",
    "is_bitext",
    "parse_gold",
    "parse_markup",
    "parse_pharaoh",
    "read_words",
    "reverse_entry",
    "run_eflomal",
    "score_table",
    "sentence_pairs",
    "text_lines",
    "textfile",
    "threshold_links",
    "translate_markup",
    "word_attention",
    "word_pairs",
    "words_of",
]
