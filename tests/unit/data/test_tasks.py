"""Built-in tasks: determinism, valid gold links, hand-checked alignments."""

from __future__ import annotations

import re

import pytest

from attnviz.data import Corpus, load_corpus
from attnviz.data.tasks import dates

TASK_NAMES = ["dates", "toy-fr", "copy", "reverse", "sort"]


def small(task: str, seed: int = 0, **kw) -> Corpus:
    return load_corpus(task, n_train=kw.pop("n_train", 60), n_valid=10, n_test=10, seed=seed, **kw)


def assert_links_valid(corpus: Corpus) -> None:
    for pair in corpus.train + corpus.valid + corpus.test:
        assert pair.sure is not None and pair.possible is not None
        assert set(pair.sure) <= set(pair.possible)
        for i, j in pair.possible:
            assert 0 <= i < len(pair.source_tokens) and 0 <= j < len(pair.target_tokens)


@pytest.mark.parametrize("task", TASK_NAMES)
def test_same_seed_same_data_and_valid_links(task):
    a, b, c = small(task, seed=1), small(task, seed=1), small(task, seed=2)
    assert a.train == b.train and a.test == b.test
    assert a.train != c.train
    assert (len(a.train), len(a.valid), len(a.test)) == (60, 10, 10)
    assert a.has_gold and a.example()
    assert_links_valid(a)
    sources = [p.source for p in a.train + a.valid + a.test]
    assert len(set(sources)) == len(sources), "no pair in two splits"


def test_test_split_does_not_move_when_train_grows():
    assert small("dates", n_train=20).test == small("dates", n_train=80).test


def test_dates_targets_are_iso_and_sure_links_copy_digits():
    for pair in dates(300, seed=5):
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", pair.target)
        assert pair.source_tokens == list(pair.source.lower())
        for i, j in pair.sure:
            assert pair.source_tokens[i] == pair.target_tokens[j]
        linked = {j for _, j in pair.possible}
        assert linked == {0, 1, 2, 3, 5, 6, 8, 9}, pair  # every digit has a source, hyphens none


def test_dates_by_hand():
    pairs = dates(2000, seed=0)
    short = next(p for p in pairs if re.fullmatch(r"\d\d\.\d\d\.\d\d", p.source))
    # dd.mm.yy: day digits 0-1 -> 8-9, month 3-4 -> 5-6, year 6-7 -> 2-3 sure, century possible
    assert set(short.sure) == {(0, 8), (1, 9), (3, 5), (4, 6), (6, 2), (7, 3)}
    assert set(short.possible) - set(short.sure) == {(6, 0), (6, 1), (7, 0), (7, 1)}
    named = next(p for p in pairs if p.source.lower().startswith("november "))
    letters = range(len("november"))
    assert {(i, 5) for i in letters} | {(i, 6) for i in letters} <= set(named.possible)
    assert not any(j in (5, 6) for _, j in named.sure)


@pytest.mark.parametrize(
    ("task", "expected"),
    [("copy", lambda n, j: j), ("reverse", lambda n, j: n - 1 - j)],
)
def test_diagonal_alignments(task, expected):
    for pair in small(task).train:
        n = len(pair.source_tokens)
        assert set(pair.sure) == {(expected(n, j), j) for j in range(n)}


def test_sort_is_a_permutation_with_ties_possible():
    for pair in small("sort").train:
        assert pair.target_tokens == sorted(pair.source_tokens)
        assert sorted(i for i, _ in pair.sure) == list(range(len(pair.source_tokens)))
        for i, j in pair.possible:
            assert pair.source_tokens[i] == pair.target_tokens[j]
