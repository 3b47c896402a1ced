"""Heads ranked against eflomal's links (silver) and gold: the ranking, the rule that picks the aligning
heads, Spearman's rank correlation, and the ranking of a tiny Marian model's heads."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.errors import DataError, InputError
from attnviz.external import HeadRanking, rank_heads, spearman
from attnviz.external.silver import as_gold, ranks

DIAGONAL = np.eye(3)  # [tgt, src]: links 0-0 1-1 2-2
REVERSED = np.eye(3)[::-1]  # links 2-0 1-1 0-2
FIRST = np.tile([1.0, 0.0, 0.0], (3, 1))  # every target word on source word 0


def test_ranks_average_ties():
    assert ranks(np.array([0.3, 0.1, 0.3, 0.2])).tolist() == [3.5, 1.0, 3.5, 2.0]


def test_spearman_matches_known_values():
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # the textbook example with ties (average ranks, Pearson on ranks)
    assert spearman([1, 2, 2, 3], [1, 3, 2, 4]) == pytest.approx(0.9486833, abs=1e-6)
    assert spearman([1, 1, 1], [1, 2, 3]) is None and spearman([1], [2]) is None
    with pytest.raises(InputError, match="same heads"):
        spearman([1, 2], [1, 2, 3])


def test_heads_ranked_against_silver_and_gold():
    names = ["diagonal", "reversed", "first"]
    stack = np.stack([DIAGONAL, REVERSED, FIRST])  # [heads, tgt, src]
    silver = [[(0, 0), (1, 1), (2, 2)]]
    gold = as_gold([[(0, 0), (1, 1), (2, 2)]])
    ranking = rank_heads(names, [stack, stack], silver * 2, gold * 2, margin=0.1)
    assert isinstance(ranking, HeadRanking) and ranking.pairs == 2
    assert ranking.heads[0].name == "diagonal"
    assert ranking.heads[0].silver_aer == pytest.approx(0.0) and ranking.heads[0].gold_aer == pytest.approx(0.0)
    assert ranking.aligning == ["diagonal"]  # the median is 2/3; only the diagonal is 0.1 below it
    assert ranking.spearman == pytest.approx(1.0)  # silver and gold are the same links here
    row = ranking.to_dict()
    assert row["aligning"] == ["diagonal"] and "median" in row["rule"] and len(row["rows"]) == 3


def test_without_gold_there_is_no_gold_aer_nor_spearman():
    ranking = rank_heads(["a", "b"], [np.stack([DIAGONAL, FIRST])], [[(0, 0), (1, 1), (2, 2)]])
    assert ranking.spearman is None and all(h.gold_aer is None for h in ranking.heads)


def test_bad_input_says_the_fix():
    stack = np.stack([DIAGONAL])
    with pytest.raises(DataError, match="one per pair"):
        rank_heads(["a"], [stack, stack], [[(0, 0)]])
    with pytest.raises(DataError, match=r"expected \[2 heads"):
        rank_heads(["a", "b"], [stack], [[(0, 0)]])
    with pytest.raises(InputError, match="argmax"):
        rank_heads(["a"], [stack], [[(0, 0)]], method="intersection")
    with pytest.raises(InputError, match="no heads"):
        rank_heads([], [stack], [[(0, 0)]])


def _right_on(k: int, words: int = 20) -> np.ndarray:
    """A head whose argmax links the first ``k`` target words to their own source word, the rest to another."""
    m = np.eye(words)[:, np.r_[1:words, 0]]  # every word on the next one: no link on the diagonal
    m[:k] = np.eye(words)[:k]
    return m  # [tgt, src]


def test_a_head_exactly_the_margin_below_the_median_aligns():
    """Silver AERs 0.65, 0.70 and 1.0 (1 - F1 of 7, 6 and 0 right links of 20): the median is 0.70 and
    0.65 is 0.05 below it, though 0.70 - 0.05 is 0.6499999... in floats."""
    stack = np.stack([_right_on(7), _right_on(6), _right_on(0)])  # [heads, tgt, src]
    ranking = rank_heads(["x", "y", "z"], [stack], [[(i, i) for i in range(20)]], margin=0.05)
    assert [h.silver_aer for h in ranking.heads] == pytest.approx([0.65, 0.70, 1.0])
    assert ranking.aligning == ["x"]


def test_no_pairs_and_a_margin_outside_0_to_1_are_refused():
    stack = np.stack([DIAGONAL])
    with pytest.raises(DataError, match="no sentence pairs"):
        rank_heads(["a"], [], [])
    for margin in (float("nan"), -0.5, 1.5):
        with pytest.raises(InputError, match="from 0 to 1"):
            rank_heads(["a"], [stack], [[(0, 0)]], margin=margin)


def test_spearman_says_why_it_is_undefined():
    silver, gold = [[(0, 0), (1, 1), (2, 2)]], as_gold([[(0, 0), (1, 1), (2, 2)]])
    one = rank_heads(["a"], [np.stack([DIAGONAL])], silver, gold)
    assert one.spearman is None and one.spearman_text == "undefined (one head: a ranking needs two or more)"
    flat = rank_heads(["a", "b"], [np.stack([DIAGONAL, DIAGONAL])], silver, gold)
    assert flat.spearman_text == "undefined (one ranking is flat)"
    two = rank_heads(["a", "b", "c"], [np.stack([DIAGONAL, REVERSED, FIRST])], silver, gold)
    assert two.spearman_text == f"{two.spearman:.3f}"
    assert (one.counted, two.counted) == ("1 head", "3 heads")
