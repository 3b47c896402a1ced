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
