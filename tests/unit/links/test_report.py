"""A sample of a corpus's alignments (attnviz.links.sample_alignments), on a shipped toy-fr model: the seed
draws the same pairs, gold scores them by AER, options out of range are refused with a message."""

from __future__ import annotations

import pytest

from attnviz.errors import InputError
from attnviz.links import sample_alignments
from attnviz.store import load


@pytest.fixture(scope="module")
def model():
    return load("toy-fr-additive-bahdanau")


def test_the_seed_draws_the_same_pairs_scored_against_gold(model):
    a = sample_alignments(model, split="test", n=5, seed=7)
    b = sample_alignments(model, split="test", n=5, seed=7)
    c = sample_alignments(model, split="test", n=5, seed=8)
    assert [s.index for s in a.sentences] == [s.index for s in b.sentences] != [s.index for s in c.sentences]
    assert a.measure == "AER" and a.data == "toy-fr" and a.split == "test" and len(a.sentences) == 5
    assert all(0.0 <= s.score <= 1.0 and s.sure for s in a.sentences)
    assert a.mean == pytest.approx(sum(s.score for s in a.sentences) / 5)
    for s in a.sentences:  # the map is the pair's words, and each link points into it
        assert s.weights.shape == (len(s.target_words), len(s.source_words))
        assert all(0 <= i < len(s.source_words) and 0 <= j < len(s.target_words) for i, j in s.links)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"split": "dev"}, "unknown split 'dev'"),
        ({"method": "threshold"}, "a report reads argmax or dtw links"),
        ({"n": 0}, "between 1 and 1000"),
        ({"n": 1001}, "between 1 and 1000"),
    ],
)
def test_options_out_of_range_are_refused_with_a_message(model, options, message):
    with pytest.raises(InputError, match=message):
        sample_alignments(model, **options)
