"""Property tests (hypothesis) of attnviz.links' pure functions: symmetrisation, transpose, argmax and
threshold links, the DTW path, and Pharaoh gold lines written by to_pharaoh and read back."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnviz.data import to_pharaoh
from attnviz.decoding.trace import argmax_links
from attnviz.links import parse_gold, parse_pharaoh, symmetrise, threshold_links, transpose
from attnviz.links.dtw import dtw_links, dtw_matrix, dtw_path

FAST = settings(max_examples=150, deadline=None, derandomize=True)

links = st.sets(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=20)
GROW = ("grow-diag", "grow-diag-final", "grow-diag-final-and")


@FAST
@given(links, links)
def test_symmetrisation_chain(fwd, bwd):
    """intersection ⊆ grow-diag ⊆ grow-diag-final(-and) ⊆ union; every method within the union."""
    inter = symmetrise(fwd, bwd, "intersection")
    union = symmetrise(fwd, bwd, "union")
    gd = symmetrise(fwd, bwd, "grow-diag")
    gdf = symmetrise(fwd, bwd, "grow-diag-final")
    gdfa = symmetrise(fwd, bwd, "grow-diag-final-and")
    assert inter == fwd & bwd and union == fwd | bwd
    assert inter <= gd <= gdf <= union
    assert gd <= gdfa <= union


@FAST
@given(links, links, st.sampled_from(("intersection", "union", *GROW)))
def test_symmetrise_is_pure_and_the_same_for_equal_directions(fwd, bwd, method):
    """Inputs untouched; lists and sets alike; a ∘ a is a for every method."""
    f0, b0 = set(fwd), set(bwd)
    assert symmetrise(list(fwd), list(bwd), method) == symmetrise(fwd, bwd, method)
    assert (fwd, bwd) == (f0, b0)
    assert symmetrise(fwd, fwd, method) == fwd


@FAST
@given(links, links, st.sampled_from(("intersection", "union")))
def test_set_methods_commute_with_transpose(fwd, bwd, method):
    assert transpose(symmetrise(transpose(fwd), transpose(bwd), method)) == symmetrise(fwd, bwd, method)
    assert symmetrise(bwd, fwd, method) == symmetrise(fwd, bwd, method)


@FAST
@given(links)
def test_transpose_twice_is_identity(a):
    assert transpose(transpose(a)) == a
    assert len(transpose(a)) == len(a)


weights = st.integers(1, 6).flatmap(
    lambda t: st.integers(1, 6).flatmap(
        lambda s: arrays(np.float64, (t, s), elements=st.floats(0, 1, allow_nan=False, width=32))
    )
)


@FAST
@given(weights)
def test_argmax_links(w):
    """At most one link a target row, on a maximal cell; every row with a positive max has one."""
    got = argmax_links(w)
    rows = [t for _, t in got]
    assert len(rows) == len(set(rows))
    for s, t in got:
        assert w[t, s] == w[t].max() and s == int(np.argmax(w[t]))
    assert {t for t in range(w.shape[0]) if w[t].max() > 0} == set(rows)
    assert len(argmax_links(w, every_row=True)) == w.shape[0]


@FAST
@given(weights, st.floats(1e-6, 1.0))
def test_threshold_links(w, thr):
    got = threshold_links(w, thr)
    assert got == {(s, t) for t in range(w.shape[0]) for s in range(w.shape[1]) if w[t, s] >= thr}
    assert threshold_links(w, min(1.0, thr * 2)) <= got  # a higher threshold keeps fewer


@FAST
@given(weights)
def test_dtw_path_monotone_and_covering(w):
    path = dtw_path(-w)
    n, m = w.shape
    assert path[0] == (0, 0) and path[-1] == (n - 1, m - 1)
    for (a, b), (c, d) in itertools.pairwise(path):
        assert (c - a, d - b) in ((1, 1), (1, 0), (0, 1))
    assert {t for t, _ in path} == set(range(n)) and {s for _, s in path} == set(range(m))
    assert dtw_links(w) == {(s, t) for t, s in dtw_path(-dtw_matrix(w))}


@FAST
@given(weights)
def test_dtw_path_is_cheapest(w):
    """No monotone path is cheaper (brute force over small matrices by dynamic programming on sums)."""
    cost = -w
    n, m = cost.shape
    best = np.full((n, m), np.inf)
    best[0, 0] = cost[0, 0]
    for i in range(n):
        for j in range(m):
            if i or j:
                prev = min(
                    best[i - 1, j - 1] if i and j else np.inf,
                    best[i - 1, j] if i else np.inf,
                    best[i, j - 1] if j else np.inf,
                )
                best[i, j] = cost[i, j] + prev
    path = dtw_path(cost)
    assert np.isclose(sum(cost[t, s] for t, s in path), best[-1, -1])


sentence_links = st.integers(1, 5).flatmap(
    lambda n: st.tuples(
        st.lists(st.tuples(st.integers(1, 8), st.integers(1, 8)), min_size=n, max_size=n),
        st.lists(
            st.tuples(
                st.sets(st.tuples(st.integers(0, 7), st.integers(0, 7))),
                st.sets(st.tuples(st.integers(0, 7), st.integers(0, 7))),
            ),
            min_size=n,
            max_size=n,
        ),
    )
)


def _fit(lengths, golds):
    """Keep the links inside each sentence."""
    out = []
    for (ns, nt), (sure, poss) in zip(lengths, golds, strict=False):
        sure = {(i, j) for i, j in sure if i < ns and j < nt}
        poss = {(i, j) for i, j in poss if i < ns and j < nt} - sure
        out.append((sure, poss))
    return out


@FAST
@given(sentence_links, st.sampled_from(["?", "-P"]), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_pharaoh_round_trip(data, mark, _newline, one_based):
    """Sure links written ``i-j`` and possible ones ``i?j`` or ``i-j-P`` read back as written (given base)."""
    lengths, golds = data
    golds = _fit(lengths, golds)
    b = int(one_based)
    lines = []
    for sure, poss in golds:
        items = [f"{i + b}-{j + b}" for i, j in sorted(sure)]
        items += [f"{i + b}?{j + b}" if mark == "?" else f"{i + b}-{j + b}-P" for i, j in sorted(poss)]
        lines.append(" ".join(items))
    gold = parse_gold(lines, lengths, "pharaoh", b)
    for (sure, poss), got in zip(golds, gold.alignments, strict=False):
        assert got.sure == sure and got.possible == sure | poss
    # to_pharaoh writes what parse_pharaoh reads (sure links only), with no lengths to check
    back = parse_pharaoh([to_pharaoh(sorted(s)) for s, _ in golds])
    assert [a.sure for a in back] == [s for s, _ in golds]
