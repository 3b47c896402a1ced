"""A split of a single file asked for alone (``load_corpus(..., split=..., first=N)``, as ``attnviz
evaluate --n N`` asks) holds the pairs, notes and order that loading every split gives, while only its
own pairs are tokenized: the rows the length filter and the duplicate check keep are found without
tokens (:func:`attnviz.data.kept.kept_rows`), a side counted only where its length does not settle it."""

from __future__ import annotations

import csv

import pytest

from attnviz.data import load_corpus
from attnviz.data.tokenize import Tokenizer

ROWS = [
    ("ein Hund läuft", "a dog runs"),
    ("ein Hund läuft", "a dog runs"),  # a duplicate
    ("\u200b\u200b", "invisible"),  # no token at all in cut 3: dropped as too short
    ("\x00\x01", "control characters"),  # spaces once cleaned: no token
    ("x" * 30, "one long word"),  # 30 characters but one token: kept under max_len 5
    ("a b c d e f g", "seven tokens"),  # over max_len 5
    ("Zwei Männer.", "Two men."),
    ("İstanbul'da", "in İstanbul"),  # lowercasing lengthens İ
    *((f"satz {k} hier", f"sentence {k} here") for k in range(60)),
    ("satz 3 hier", "sentence 3 here"),  # a late duplicate
]


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "pairs.tsv"
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, delimiter="\t", lineterminator="\n")
        writer.writerow(["de", "en"])
        writer.writerows(ROWS)
    return f"{path}?src=de&tgt=en"


@pytest.mark.parametrize(
    "options",
    [{}, {"max_len": 5}, {"min_len": 2, "max_len": 3}, {"lowercase": False, "n_test": 7, "seed": 3}, {"dedupe": False}],
)
@pytest.mark.parametrize("split", ["test", "valid", "train"])
def test_one_split_alone_is_the_split_of_the_whole_load(table, options, split):
    whole = load_corpus(table, **options)
    for first in (None, 1, 4, 1000):
        alone = load_corpus(table, **options, split=split, first=first)
        assert alone.split(split) == whole.split(split)[:first] and alone.notes == whole.notes
        assert all(alone.split(k) == [] for k in ("train", "valid", "test") if k != split)


def test_only_the_pairs_taken_are_tokenized(table, monkeypatch):
    calls = []
    tokenize = Tokenizer.tokenize
    monkeypatch.setattr(Tokenizer, "tokenize", lambda self, text: calls.append(text) or tokenize(self, text))
    assert len(load_corpus(table, split="test", first=2).test) == 2
    assert len(calls) == 4  # two pairs, two sides each


@pytest.mark.parametrize("cut", [1, 2, 3])
@pytest.mark.parametrize("text", ["", " ", "a", "a b", "\u200b", "x" * 9, "İİ", "a-b c'd", "🇫🇷 !", "\x00 b"])
def test_count_within_is_the_count_of_the_tokens(cut, text):
    for kind, lowercase in (("word", True), ("word", False), ("char", True)):
        tokenizer = Tokenizer(kind, lowercase, word_cut=cut)
        n = len(tokenizer.tokenize(text))
        for low, high in ((0, None), (1, None), (1, 1), (1, 2), (2, 3), (0, 0), (3, None)):
            assert tokenizer.count_within(text, low, high) == (low <= n and (high is None or n <= high))
