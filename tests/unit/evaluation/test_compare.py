"""Compare's gold table: each model's AER and mean entropy on one pair."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.data import Pair
from attnviz.decoding import Alignment
from attnviz.errors import InputError
from attnviz.evaluation import aer_rows, mean_entropy

SOURCE, TARGET = ["le", "chat", "<eos>"], ["the", "cat", "<eos>"]
EOS_ROW = [0.1, 0.1, 0.8]


def forced(rows: list[list[float]]) -> Alignment:
    """A hand-built alignment of TARGET on SOURCE: ``rows`` are the weights of "the" and "cat"."""
    weights = np.array([*rows, EOS_ROW])  # [tgt, src], <eos> row and column included
    return Alignment(
        source_tokens=SOURCE,
        target_tokens=TARGET,
        weights=weights,
        scores=np.log(weights),
        contexts=np.zeros((3, 4)),
        states=np.zeros((3, 4)),
        source_unknown=[False] * 3,
        score="dot",
        style="luong",
    )


DIAGONAL = forced([[0.9, 0.05, 0.05], [0.1, 0.8, 0.1]])  # links (0, 0), (1, 1)
CROSSED = forced([[0.1, 0.8, 0.1], [0.8, 0.1, 0.1]])  # links (1, 0), (0, 1)
HALF = forced([[0.9, 0.05, 0.05], [0.1, 0.1, 0.8]])  # (0, 0); "cat" attends to <eos>: no link


def pair(possible: list[tuple[int, int]] | None = None) -> Pair:
    return Pair("le chat", "the cat", SOURCE[:2], TARGET[:2], sure=[(0, 0), (1, 1)], possible=possible)


def test_one_row_per_model_in_order_with_its_aer_and_mean_entropy():
    rows = aer_rows({"diagonal": DIAGONAL, "crossed": CROSSED, "half": HALF}, pair())
    assert [r["model"] for r in rows] == ["diagonal", "crossed", "half"]
    assert [r["AER"] for r in rows] == [0.0, 1.0, 0.333]  # half: 1 - (1 + 1) / (1 + 2)
    assert [r["mean entropy"] for r in rows] == [round(mean_entropy(a), 3) for a in (DIAGONAL, CROSSED, HALF)]
    assert set(rows[0]) == {"model", "AER", "mean entropy"}


def test_possible_links_count_and_digits_round():
    [row] = aer_rows({"crossed": CROSSED}, pair(possible=[(0, 1)]), digits=2)
    assert row["AER"] == 0.75  # 1 - (0 + 1) / (2 + 2)
    assert row["mean entropy"] == round(mean_entropy(CROSSED), 2)


def test_a_pair_without_gold_links_is_refused_with_the_fix():
    with pytest.raises(InputError, match="no gold alignment"):
        aer_rows({"diagonal": DIAGONAL}, Pair("le chat", "the cat", SOURCE[:2], TARGET[:2]))
