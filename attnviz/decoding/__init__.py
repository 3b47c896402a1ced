"""Decoding: greedy, beam and forced search with the full attention trace, the Translator, the Alignment."""

from attnviz.decoding.search import encode_one, greedy
from attnviz.decoding.trace import Alignment
from attnviz.decoding.translator import Translator

__all__ = ["Alignment", "Translator", "encode_one", "greedy"]
