"""Whisper's DTW recipe: the median filter, the standardisation, the monotonic path and its links,
and ``dtw`` as an extraction method of attnviz models, scored against gold like the others."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from attnviz.errors import InputError
from attnviz.links import DIRECTIONAL, align_words, directional_links, dtw_links, dtw_matrix, dtw_path
from attnviz.links.dtw import median_filter, standardise


def test_median_filter_reflects_at_the_ends():
    x = np.array([[1.0, 9.0, 2.0, 3.0, 100.0]])
    # windows of 3 with reflection: [9,1,9] [1,9,2] [9,2,3] [2,3,100] [3,100,3]
    assert median_filter(x, 3).tolist() == [[9.0, 2.0, 3.0, 3.0, 3.0]]
    assert median_filter(x, 1).tolist() == x.tolist()
    assert median_filter(np.array([[4.0]]), 3).tolist() == [[4.0]]  # one column: nothing to reflect
    with pytest.raises(InputError, match="odd"):
        median_filter(x, 2)


def test_standardise_makes_columns_z_scores_and_constant_columns_zero():
    heads = np.array([[[0.2, 0.5], [0.6, 0.5]]])  # [1 head, 2 tgt, 2 src]; column 1 is constant
    z = standardise(heads)
    assert np.allclose(z[0, :, 0], [-1.0, 1.0])
    assert np.all(z[0, :, 1] == 0)


def test_the_path_is_monotonic_and_covers_both_sides():
    rng = np.random.default_rng(0)
    cost = rng.random((6, 9))
    path = dtw_path(cost)
    assert path[0] == (0, 0) and path[-1] == (5, 8)
    for (t0, s0), (t1, s1) in pairwise(path):
        assert (t1 - t0, s1 - s0) in {(1, 1), (1, 0), (0, 1)}
    assert {t for t, _ in path} == set(range(6)) and {s for _, s in path} == set(range(9))


def test_the_path_is_the_cheapest_one():
    """Against every monotonic path of a small matrix, enumerated."""
    rng = np.random.default_rng(1)
    cost = rng.random((3, 4))

    def paths(i, j):
        if (i, j) == (0, 0):
            yield [(0, 0)]
            return
        for di, dj in ((1, 1), (1, 0), (0, 1)):
            if i - di >= 0 and j - dj >= 0:
                for p in paths(i - di, j - dj):
                    yield [*p, (i, j)]

    best = min(sum(cost[c] for c in p) for p in paths(2, 3))
    assert sum(cost[c] for c in dtw_path(cost)) == pytest.approx(best)


def test_a_diagonal_attention_gives_the_diagonal():
    w = np.full((4, 4), 0.05) + np.eye(4) * 0.8
    assert dtw_links(w) == {(k, k) for k in range(4)}
    assert dtw_links(np.stack([w, w.T])) == {(k, k) for k in range(4)}  # two heads agreeing
    wide = np.kron(w, np.ones((1, 3)))  # [4, 12]: each target word attends to a run of 3 columns
    assert dtw_links(wide, width=3) == dtw_links(wide, width=1)  # a filter of 3 keeps a 3-wide peak


def test_a_sink_column_does_not_swallow_the_path():
    """Every row puts most weight on column 0 (a sink); argmax links everything there, while the
    standardised matrix follows the small diagonal bumps."""
    w = np.array([[0.7, 0.2, 0.05, 0.05], [0.7, 0.05, 0.2, 0.05], [0.7, 0.05, 0.05, 0.2]])
    assert directional_links(w, "argmax") == {(0, 0), (0, 1), (0, 2)}
    links = dtw_links(w, width=1)
    assert {(1, 0), (2, 1), (3, 2)} <= links


def test_dtw_matrix_refuses_bad_shapes():
    with pytest.raises(InputError, match="heads"):
        dtw_matrix(np.zeros(3))
    with pytest.raises(InputError, match="non-empty"):
        dtw_path(np.zeros((0, 2)))


def test_dtw_is_a_method_of_attnviz_models(trained):
    """On an attnviz model (it reverses its input): every word of both sides on the path."""
    assert "dtw" in DIRECTIONAL
    src = "a b c d"
    wa = align_words(trained, src, " ".join(reversed(src.split())), method="dtw")
    assert wa.method == "dtw"
    assert {t for _, t in wa.links} == set(range(len(wa.target_words)))
    assert {s for s, _ in wa.links} == set(range(len(wa.source_words)))
