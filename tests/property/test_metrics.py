"""Property tests (hypothesis) of attnviz.evaluation.metrics: AER, precision and recall against their
definitions with sure and possible links, and the bounds of entropy and the JS divergence."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnviz.evaluation.metrics import AlignmentCounts, aer, alignment_counts, entropy, js_divergence

FAST = settings(max_examples=150, deadline=None, derandomize=True)
link_set = st.sets(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=15)
corpus = st.lists(st.tuples(link_set, link_set, link_set), max_size=5)  # (predicted, sure, possible) per sentence


@FAST
@given(corpus)
def test_aer_precision_recall_definitions(sentences):
    a = [x for x, _, _ in sentences]
    s = [y for _, y, _ in sentences]
    p = [z for _, _, z in sentences]
    total = sum(alignment_counts(a, s, p), AlignmentCounts())
    A = sum(len(x) for x in a)
    S = sum(len(y) for y in s)
    AS = sum(len(x & y) for x, y in zip(a, s, strict=False))
    AP = sum(len(x & (y | z)) for x, y, z in zip(a, s, p, strict=False))
    assert (total.predicted, total.sure, total.predicted_sure, total.predicted_possible) == (A, S, AS, AP)
    assert 0.0 <= total.aer <= 1.0 and 0.0 <= total.precision <= 1.0 and 0.0 <= total.recall <= 1.0
    assert math.isclose(total.aer, 1 - (AS + AP) / (A + S) if A + S else 0.0)
    assert math.isclose(aer(a, s, p), total.aer)
    # P given or not: with possible=None, P = S
    assert math.isclose(aer(a, s), aer(a, s, [set() for _ in s]))


@FAST
@given(st.lists(st.tuples(link_set, link_set), max_size=5))
def test_gold_scores_itself_perfectly(gold):
    sure = [s for s, _ in gold]
    possible = [s | p for s, p in gold]
    assert aer(sure, sure, possible) == 0.0  # A = S
    assert aer(possible, sure, possible) == 0.0  # A = P (S ⊆ P)
    c = sum(alignment_counts(sure, sure, possible), AlignmentCounts())
    assert c.precision == 1.0 and c.recall == 1.0 and c.f1 == 1.0


@FAST
@given(st.lists(st.tuples(link_set, link_set), min_size=1, max_size=5))
def test_no_overlap_is_worst(pairs):
    """Predicted links disjoint from every gold link: AER 1 (when anything was predicted or sure)."""
    a = [{(i + 10, j) for i, j in x} for x, _ in pairs]
    s = [y for _, y in pairs]
    if any(a) or any(s):
        assert aer(a, s) == 1.0


def probs_of(n: int):
    return (
        arrays(np.float64, (3, n), elements=st.floats(0, 1, allow_nan=False))
        .filter(lambda x: (x.sum(1) > 0).all())
        .map(lambda x: x / x.sum(axis=1, keepdims=True))
    )


probs = st.integers(1, 8).flatmap(probs_of)


@FAST
@given(probs)
def test_entropy_bounds(w):
    h = entropy(w)
    n = w.shape[1]
    assert h.shape == (3,)
    assert (h >= -1e-12).all() and (h <= math.log(n) + 1e-9).all()
    np.testing.assert_allclose(entropy(np.full((1, n), 1 / n)), [math.log(n)], atol=1e-12)
    onehot = np.eye(n)
    np.testing.assert_allclose(entropy(onehot), 0.0, atol=0)


@FAST
@given(st.integers(1, 8).flatmap(lambda n: st.tuples(probs_of(n), probs_of(n))))
def test_js_bounds_and_symmetry(pq):
    p, q = pq
    d = js_divergence(p, q)
    assert (d >= 0).all() and (d <= math.log(2) + 1e-9).all()
    np.testing.assert_allclose(d, js_divergence(q, p), atol=1e-12)
    np.testing.assert_allclose(js_divergence(p, p), 0.0, atol=1e-12)
