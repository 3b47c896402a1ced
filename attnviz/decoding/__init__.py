"""Decoding: greedy, beam and forced search with the full attention trace, the Translator, the Alignment."""

from attnviz.decoding.history import POINT_KINDS, POINT_NUMBERS, AlignmentHistory, HistoryProbe
from attnviz.decoding.search import encode_one, greedy
from attnviz.decoding.trace import Alignment, argmax_links, significant
from attnviz.decoding.translator import Source, Translator

__all__ = [
    "POINT_KINDS",
    "POINT_NUMBERS",
    "Alignment",
    "AlignmentHistory",
    "HistoryProbe",
    "Source",
    "Translator",
    "argmax_links",
    "encode_one",
    "greedy",
    "significant",
]
