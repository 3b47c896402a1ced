"""Metrics: BLEU, exact match, AER with precision and recall, entropy, Jensen-Shannon divergence,
monotonicity."""

import math

import numpy as np
import pytest

from attnviz.decoding.trace import Alignment
from attnviz.errors import InputError
from attnviz.evaluation.metrics import (
    AlignmentCounts,
    aer,
    alignment_counts,
    alignment_links,
    bleu,
    bleu_tokenize,
    entropy,
    exact_match,
    js_divergence,
    mean_entropy,
)


def make_alignment(source: list[str], target: list[str], weights: np.ndarray) -> Alignment:
    """A hand-built alignment; ``source``/``target`` include ``<eos>`` where the weights do."""
    n_tgt, n_src = weights.shape
    return Alignment(
        source_tokens=source,
        target_tokens=target,
        weights=weights,
        scores=np.log(np.clip(weights, 1e-9, None)),
        contexts=np.zeros((n_tgt, 4)),
        states=np.zeros((n_tgt, 4)),
        source_unknown=[False] * n_src,
        score="dot",
        style="luong",
    )


def test_bleu_identical_corpus_is_100_and_disjoint_is_0():
    refs = ["the cat sat on the mat", "a dog ran in the park today"]
    assert bleu(refs, refs) == pytest.approx(100.0)
    assert bleu(["zz yy xx ww vv", "qq pp oo nn mm ll"], refs) == pytest.approx(0.0)


@pytest.mark.parametrize(
    ("reference", "output", "tokenize"),
    [
        ("这只猫吃苹果。", "这只狗吃苹果。", "zh"),  # one character of seven wrong
        ("ねこがりんごを食べる。", "ねこがみかんを食べる。", "zh"),
        ("แมวกินแอปเปิ้ล", "แมวกินส้ม", "char"),
    ],
)
def test_bleu_reads_text_written_without_spaces_by_its_characters(reference, output, tokenize):
    """13a would read each of these sentences as one word: an exact output 100, any other 0."""
    assert bleu_tokenize([reference]) == tokenize
    assert bleu([reference], [reference]) == pytest.approx(100)
    assert 0 < bleu([output], [reference]) < 100
    assert bleu_tokenize(["A man rides a bike.", "Ein Mann fährt Rad."]) == "13a"


def test_bleu_lowercase_flag():
    hyp, ref = ["The Cat Sat On The Mat"], ["the cat sat on the mat"]
    assert bleu(hyp, ref) == pytest.approx(100.0)
    assert bleu(hyp, ref, lowercase=False) < 100.0


def test_bleu_and_exact_match_check_lengths_and_empty():
    with pytest.raises(InputError, match="one reference per hypothesis"):
        bleu(["a"], ["a", "b"])
    with pytest.raises(InputError):
        exact_match(["a"], [])
    assert bleu([], []) == 0.0
    assert exact_match([], []) == 0.0


def test_exact_match_fraction():
    assert exact_match(["a b", "c ", "d"], ["a b", "c", "e"]) == pytest.approx(2 / 3)


def test_aer_by_hand():
    # sentence 1: A = {(0,0), (1,1), (2,1)}, S = {(0,0), (1,1)}, P = S + {(2,2)}
    # sentence 2: A = {(0,1)}, S = {(0,0)}, P = S + {(0,1)}
    # |A∩S| = 2 + 0, |A∩P| = 2 + 1, |A| = 4, |S| = 3 -> AER = 1 - 5/7
    a = [{(0, 0), (1, 1), (2, 1)}, {(0, 1)}]
    s = [{(0, 0), (1, 1)}, {(0, 0)}]
    p = [{(2, 2)}, {(0, 0), (0, 1)}]  # possible need not repeat sure links
    assert aer(a, s, p) == pytest.approx(1 - 5 / 7)


def test_aer_perfect_and_disjoint_and_lists():
    s = [[(0, 0), (1, 1)]]
    assert aer(s, s) == pytest.approx(0.0)
    assert aer([[(0, 1), (1, 0)]], s) == pytest.approx(1.0)
    assert aer([set()], [set()]) == 0.0
    with pytest.raises(InputError, match="one link set per sentence"):
        aer([set()], [set(), set()])


def test_alignment_links_drop_eos_row_and_column():
    w = np.array(
        [
            [0.1, 0.8, 0.1],  # "b" <- "y": link (1, 0)
            [0.7, 0.2, 0.1],  # "a" <- "x": link (0, 1)
            [0.1, 0.1, 0.8],  # "c" attends to <eos>: no link
            [0.1, 0.1, 0.8],  # the <eos> row: dropped
        ]
    )
    al = make_alignment(["x", "y", "<eos>"], ["b", "a", "c", "<eos>"], w)
    assert alignment_links(al) == {(1, 0), (0, 1)}
    assert alignment_links(al, n_source=1, n_target=3) == {(0, 1)}
    assert aer([alignment_links(al)], [{(1, 0), (0, 1), (1, 2)}]) == pytest.approx(1 - 4 / 5)


def test_entropy_uniform_is_log_n_and_one_hot_is_zero():
    for n in (1, 2, 7):
        assert entropy(np.full(n, 1 / n)) == pytest.approx(math.log(n))
    h = entropy(np.array([[1.0, 0.0, 0.0], [0.25, 0.25, 0.5]]))
    assert h.shape == (2,)
    assert h[0] == pytest.approx(0.0)
    assert h[1] == pytest.approx(-(0.5 * math.log(0.25) + 0.5 * math.log(0.5)))


def test_mean_entropy_over_alignments_and_arrays():
    w = np.array([[1.0, 0.0], [0.5, 0.5]])
    al = make_alignment(["x", "<eos>"], ["a", "<eos>"], w)
    assert mean_entropy(w) == pytest.approx(math.log(2) / 2)
    assert mean_entropy([al, np.full((2, 4), 0.25)]) == pytest.approx((math.log(2) + 2 * math.log(4)) / 4)


def test_js_divergence_identical_symmetric_bounded():
    p = np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0], [0.2, 0.3, 0.5]])
    q = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [0.2, 0.3, 0.5]])
    assert np.allclose(js_divergence(p, p), 0.0)
    assert np.allclose(js_divergence(p, q), js_divergence(q, p))
    js = js_divergence(p, q)
    assert js[0] == pytest.approx(math.log(2))  # disjoint supports: the maximum
    assert js[2] == pytest.approx(0.0)
    with pytest.raises(InputError, match="same shape"):
        js_divergence(p, q[:2])


def test_precision_recall_aer_by_hand():
    # S = {0-0, 1-1}, P = S + {2-1}; A = {0-0, 2-1, 2-2}: |A∩S| = 1, |A∩P| = 2
    first = alignment_counts([{(0, 0), (2, 1), (2, 2)}], [{(0, 0), (1, 1)}], [{(2, 1)}])[0]
    assert (first.precision, first.recall) == (pytest.approx(2 / 3), 0.5)
    assert first.aer == pytest.approx(1 - (1 + 2) / (3 + 2))
    second = alignment_counts([{(0, 0)}], [{(0, 0)}])[0]
    assert (second.precision, second.recall, second.aer, second.f1) == (1.0, 1.0, 0.0, 1.0)
    corpus = first + second  # counts add up: |A| = 4, |S| = 3, |A∩S| = 2, |A∩P| = 3
    assert corpus == AlignmentCounts(predicted=4, sure=3, predicted_sure=2, predicted_possible=3)
    assert (corpus.precision, corpus.recall) == (0.75, pytest.approx(2 / 3))
    assert corpus.aer == pytest.approx(2 / 7)
    assert aer([{(0, 0), (2, 1), (2, 2)}, {(0, 0)}], [{(0, 0), (1, 1)}, {(0, 0)}], [{(2, 1)}, set()]) == (
        pytest.approx(2 / 7)
    )
    empty = AlignmentCounts()
    assert (empty.precision, empty.recall, empty.aer) == (1.0, 1.0, 0.0)


def test_possible_links_never_count_as_sure_misses():
    # predicting only a possible link: precision 1, recall 0 (sure ⊆ possible, not the reverse)
    c = alignment_counts([{(2, 1)}], [{(0, 0)}], [{(0, 0), (2, 1)}])[0]
    assert (c.precision, c.recall, c.aer) == (1.0, 0.0, pytest.approx(1 - 1 / 2))


def test_mean_entropy_is_a_mean_over_every_step_not_over_sentences():
    one_step = np.array([[1.0, 0.0]])  # entropy 0
    three_steps = np.full((3, 2), 0.5)  # ln 2 each
    assert mean_entropy([one_step, three_steps]) == pytest.approx(3 * math.log(2) / 4)


def test_bleu_reads_chinese_characters_from_a_third_of_the_letters():
    assert bleu_tokenize(["東京大 is big"]) == "zh"  # 3 of 8 letters: at least a third
    assert bleu_tokenize(["東京 is big"]) == "13a"  # 2 of 7: less
