"""Drift of predicted links against reference links: planted offsets and their start positions are
recovered exactly, per sentence and for a corpus; empty, one-word and reference-less sentences are
undecided or trivially without drift."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnviz.errors import InputError
from attnviz.links import corpus_drift, sentence_drift


def planted(reference: list[tuple[int, int]], offset: int, start: int, n_src: int) -> list[tuple[int, int]]:
    """``reference`` with the source index of every link at target position ``start`` or later moved by
    ``offset``; a link moved outside the sentence is dropped."""
    return [(i + offset, j) if j >= start else (i, j) for i, j in reference if j < start or 0 <= i + offset < n_src]


DIAGONAL = [(k, k) for k in range(8)]


@pytest.mark.parametrize(("offset", "start"), [(1, 3), (-1, 4), (2, 0), (-3, 5), (1, 5)])
def test_a_planted_shift_on_the_diagonal_is_found_with_its_start(offset, start):
    found = sentence_drift(planted(DIAGONAL, offset, start, 8), DIAGONAL, length=8)
    assert (found.offset, found.start) == (offset, start)
    assert found.before == (1.0 if start else None) and found.after == 0.0 and found.shifted == 1.0
    kept = sum(0 <= k + offset < 8 for k in range(start, 8))
    assert found.gain == kept and found.relative_start == start / 8


def test_one_link_off_is_an_error_unless_min_gain_is_one():
    last = planted(DIAGONAL, 1, 6, 8)  # word 6 moved to source 7, word 7 moved out of the sentence
    assert sentence_drift(last, DIAGONAL).offset == 0
    found = sentence_drift(last, DIAGONAL, min_gain=1)
    assert (found.offset, found.start, found.gain) == (1, 6, 1)


def test_no_shift_is_offset_zero_without_a_start():
    found = sentence_drift(DIAGONAL, DIAGONAL)
    assert (found.offset, found.start, found.gain, found.before, found.after) == (0, None, 0, 1.0, None)
    wrong = sentence_drift([(5, 0), (6, 1)], [(0, 0), (1, 1)])  # nothing agrees at any offset up to 3
    assert (wrong.offset, wrong.before) == (0, 0.0)


def test_the_start_is_the_first_word_that_shows_the_drift_not_an_unlinked_word_before_it():
    reference = [(0, 0), (1, 1), (3, 3), (4, 4)]  # target word 2 has no reference link
    predicted = [(0, 0), (1, 1), (2, 2), (4, 3), (5, 4)]
    assert (sentence_drift(predicted, reference).offset, sentence_drift(predicted, reference).start) == (1, 3)


def test_ties_go_to_the_smaller_then_the_positive_offset():
    reference = [(2, 0), (2, 1)]
    both = [(3, 0), (1, 1)]  # +1 wins one link from word 0, -1 one from word 1
    assert sentence_drift(both, reference, min_gain=1).offset == 1
    far = [(4, 0), (3, 1)]  # +2 at word 0 or +1 at word 1: the smaller offset
    assert sentence_drift(far, reference, min_gain=1).offset == 1


def test_the_target_side_shifts_target_indices_and_counts_source_positions():
    reference = [(k, k) for k in range(6)]
    predicted = [(i, j - 1) if i >= 2 else (i, j) for i, j in reference if i < 2 or j >= 1]
    found = sentence_drift(predicted, reference, side="target")
    assert (found.offset, found.start) == (-1, 2)
    assert sentence_drift(predicted, reference, side="source").offset == 1  # the same drift, seen from the source


def test_edge_cases_are_undecided_or_without_drift():
    assert sentence_drift([], [(0, 0)]).offset is None
    assert sentence_drift([(0, 0)], []).offset is None
    assert sentence_drift([], []).offset is None and sentence_drift([], []).length == 0
    one = sentence_drift([(0, 0)], [(0, 0)], length=1)
    assert (one.offset, one.start, one.before) == (0, None, 1.0)
    one_target_word = sentence_drift([(2, 0)], [(1, 0)], length=1, min_gain=1)  # a source drift is still visible
    assert (one_target_word.offset, one_target_word.start) == (1, 0)
    one_source_word = sentence_drift([(0, 0), (0, 1)], [(0, 0), (0, 1)], side="target")
    assert one_source_word.offset == 0


def test_bad_input_says_how_to_fix_it():
    with pytest.raises(InputError, match="0-based"):
        sentence_drift([(0, 5)], [(0, 0)], length=3)
    with pytest.raises(InputError, match="negative"):
        sentence_drift([(-1, 0)], [(0, 0)])
    with pytest.raises(InputError, match="side must be"):
        sentence_drift([(0, 0)], [(0, 0)], side="both")
    with pytest.raises(InputError, match="max_offset"):
        sentence_drift([(0, 0)], [(0, 0)], max_offset=0)
    with pytest.raises(InputError, match="min_gain"):
        sentence_drift([(0, 0)], [(0, 0)], min_gain=0)
    with pytest.raises(InputError, match="one list of links per pair"):
        corpus_drift([[(0, 0)]], [])
    with pytest.raises(InputError, match="lengths"):
        corpus_drift([[(0, 0)]], [[(0, 0)]], lengths=[])
    with pytest.raises(InputError, match="bins"):
        corpus_drift([[(0, 0)]], [[(0, 0)]], bins=0)


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 14),
    offset=st.integers(-3, 3),
    start_share=st.floats(0, 1, exclude_max=True),
    min_gain=st.sampled_from([1, 2]),
)
def test_random_planted_shifts_and_starts_are_recovered_exactly(seed, n, offset, start_share, min_gain):
    rng = random.Random(seed)
    order = list(range(n))
    rng.shuffle(order)
    reference = [(order[j], j) for j in range(n)]  # one source word per target word, in any order
    start = int(start_share * n)
    while offset and not 0 <= order[start] + offset < n:  # the first shifted word must stay in the sentence
        start += 1
        if start == n:
            offset, start = 0, 0
    moved = sum(0 <= order[j] + offset < n for j in range(start, n)) if offset else 0
    found = sentence_drift(planted(reference, offset, start, n), reference, length=n, min_gain=min_gain)
    expected = offset if moved >= min_gain else 0  # fewer moved links than min_gain: an error, not a drift
    assert found.offset == expected
    assert found.start == (start if expected else None)
    assert found.gain == (moved if expected else 0)


def test_a_corpus_reports_the_dominant_offset_its_share_start_and_histogram():
    reference = [[(k, k) for k in range(10)] for _ in range(6)]
    predicted = [planted(r, 1, s, 10) for r, s in zip(reference[:4], (2, 4, 6, 7), strict=True)]
    predicted += [reference[4], None]  # one without drift, one skipped
    report = corpus_drift([*predicted], reference, lengths=[(10, 10)] * 6)
    assert report.histogram == {-3: 0, -2: 0, -1: 0, 0: 1, 1: 4, 2: 0, 3: 0}
    assert (report.dominant, report.share, report.drift, report.drift_share) == (1, 0.8, 1, 0.8)
    assert (report.start, report.relative_start, report.decided) == (5, 0.5, 5)
    assert report.sentences[5] is None and [s.start for s in report.sentences[:4]] == [2, 4, 6, 7]
    assert report.positions == "target"
    profile = dict(zip(report.offsets, report.profile, strict=True))
    assert profile[0][0] == 1.0 and profile[1][0] == 0.0  # the first tenth: every link on the reference
    assert profile[1][9] == 0.0 and profile[0][9] == 1.0  # the last word: only the sentence without drift kept it
    assert profile[1][7] == 0.8 and profile[0][7] == 0.2  # word 7: drifted in four of the five sentences
    assert report.agreement[1] == pytest.approx((7 + 5 + 3 + 2) / 46)  # moved links of all: 9 a drifted sentence, 10
    data = json.loads(json.dumps(report.to_dict(sentences=True)))
    assert data["histogram"]["+1"] == 4 and data["histogram"]["0"] == 1 and data["dominant"] == 1
    assert data["sentences"][0]["start"] == 2 and data["sentences"][5] is None


def test_a_corpus_mostly_without_drift_still_names_its_drift_and_undecided_pairs():
    reference = [[(0, 0), (1, 1), (2, 2)], [(0, 0), (1, 1), (2, 2)], [(0, 0), (1, 1), (2, 2)], []]
    predicted = [reference[0], reference[1], [(0, 0), (1, 1), (1, 2)], [(0, 0)]]
    report = corpus_drift(predicted, reference, min_gain=1)
    assert (report.dominant, report.drift, report.start, report.undecided) == (0, -1, 2, [3])
    assert corpus_drift(predicted, reference).drift is None  # one link off: an error by default
    assert report.share == pytest.approx(2 / 3) and report.drift_share == pytest.approx(1 / 3)


def test_an_empty_or_undecided_corpus_has_no_dominant_offset():
    empty = corpus_drift([], [])
    assert (empty.dominant, empty.drift, empty.decided, empty.share) == (None, None, 0, 0.0)
    assert all(v is None for row in empty.profile for v in row) and empty.agreement[0] is None
    none = corpus_drift([[], None], [[(0, 0)], [(0, 0)]])
    assert (none.dominant, none.undecided) == (None, [0])
