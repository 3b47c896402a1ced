"""The tokenizer's first, plain form: ``clean_text`` walking the text character by character with
``unicodedata.category``. The compiled path of :mod:`attnviz.data.tokenize` must cut every text
exactly as this does (the tests, and ``benchmarks/corpus_read.py --check`` on all of Multi30k)."""

from __future__ import annotations

import unicodedata

from attnviz.data.tokenize import _WORD_RES, Tokenizer


def clean_text(text: str) -> str:
    text = unicodedata.normalize("NFC", text)
    return "".join(" " if unicodedata.category(c) in ("Cc", "Cs") and c != "\n" else c for c in text)


def tokenize(tokenizer: Tokenizer, text: str) -> list[str]:
    """What ``tokenizer.tokenize(text)`` gives, the slow way."""
    text = clean_text(text)
    words = list(" ".join(text.split())) if tokenizer.kind == "char" else _WORD_RES[tokenizer.word_cut].findall(text)
    forms = [w.lower() if tokenizer.lowercase else w for w in words]
    return tokenizer.bpe.segment_all(forms) if tokenizer.bpe is not None else forms
