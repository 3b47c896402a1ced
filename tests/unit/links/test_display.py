"""Display transforms of an alignment: <eos> hidden and rows renormalised, decodes lined up by
step, subword pieces merged into words, the reading options."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attnviz.decoding.trace import Alignment
from attnviz.errors import InputError
from attnviz.links.display import common_steps, first_steps, for_reading, merged_pieces, parting_step, without_eos


def alignment(weights, target=None, source=("a", "b", "<eos>")) -> Alignment:
    w = np.asarray(weights, dtype=np.float32)
    n_tgt, n_src = w.shape
    return Alignment(
        source_tokens=list(source),
        target_tokens=list(target or [f"y{t}" for t in range(n_tgt)]),
        weights=w,
        scores=np.log(w + 1e-9),
        contexts=np.zeros((n_tgt, 4)),
        states=np.zeros((n_tgt, 4)),
        source_unknown=[False] * n_src,
        score="dot",
        style="luong",
    )


def test_hiding_eos_renormalises_each_row_and_keeps_an_all_eos_row_empty():
    al = alignment([[0.2, 0.2, 0.6], [0.0, 0.0, 1.0]])
    hidden = without_eos(al)
    assert hidden.source_tokens == ["a", "b"] and hidden.source_unknown == [False, False]
    np.testing.assert_allclose(hidden.weights, [[0.5, 0.5], [0.0, 0.0]])
    assert hidden.scores.shape == (2, 2) and hidden.target_tokens == al.target_tokens
    np.testing.assert_allclose(al.weights[:, -1], [0.6, 1.0], rtol=1e-6)  # the decode itself is untouched


def test_two_decodes_of_different_length_line_up_by_step():
    a = alignment([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    b = alignment([[0, 1, 0], [0, 0, 1]])
    a2, b2 = common_steps(a, b)
    assert len(a2.target_tokens) == len(b2.target_tokens) == 2
    np.testing.assert_array_equal(a2.weights, a.weights[:2])
    with pytest.raises(InputError):
        first_steps(a, 4)
    with pytest.raises(InputError, match="different source"):
        common_steps(a, alignment([[1.0, 0.0]], source=("x", "<eos>")))


SOURCE = ["das", "haus@@", "garten", "<eos>"]
TARGET = ["the", "gar@@", "den", "<eos>"]


def piece_alignment(source=SOURCE, target=TARGET, seed=0) -> Alignment:
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(len(target), len(source)))  # [tgt, src]
    w = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    return Alignment(
        source_tokens=list(source),
        target_tokens=list(target),
        weights=w.astype(np.float32),
        scores=scores,
        contexts=rng.normal(size=(len(target), 3)),
        states=rng.normal(size=(len(target), 5)),
        source_unknown=[False, True, False, False],
        score="dot",
        style="luong",
        token_log_probs=np.log(np.full(len(target), 0.5)),
        encoder_attention=np.full((1, 2, len(source), len(source)), 1 / len(source)),
    )


def test_merging_sums_source_columns_and_averages_target_rows():
    al = piece_alignment()
    m = merged_pieces(al)
    assert m.source_tokens == ["das", "hausgarten", "<eos>"] and m.target_tokens == ["the", "garden", "<eos>"]
    w = al.weights.astype(np.float64)
    expected_row = (w[1] + w[2]) / 2  # "garden" = the mean of gar@@ and den
    hausgarten = expected_row[1] + expected_row[2]  # haus@@ and garten's columns summed
    np.testing.assert_allclose(m.weights[1], [expected_row[0], hausgarten, expected_row[3]], rtol=1e-6)
    np.testing.assert_allclose(m.weights.sum(axis=1), 1.0, rtol=1e-6)
    assert m.source_unknown == [False, True, False]  # a word with an unknown piece is unknown
    np.testing.assert_allclose(m.contexts[1], (al.contexts[1] + al.contexts[2]) / 2)
    np.testing.assert_allclose(m.token_log_probs, [np.log(0.5), 2 * np.log(0.5), np.log(0.5)])
    assert m.encoder_attention.shape == (1, 2, 3, 3)
    np.testing.assert_allclose(m.encoder_attention.sum(axis=-1), 1.0)
    softmax = np.exp(m.scores[0]) / np.exp(m.scores[0]).sum()  # log-sum-exp keeps a row's softmax
    np.testing.assert_allclose(softmax, m.weights[0], rtol=1e-5)
    assert al.source_tokens == SOURCE  # the decode itself is untouched


def test_merging_without_pieces_returns_the_alignment_itself():
    al = piece_alignment(["a", "b", "c", "<eos>"], ["x", "y", "z", "<eos>"])
    assert merged_pieces(al) is al
    shown = for_reading(al, hide=False, merge=True)
    assert shown.alignment is al and shown.note == "" and not shown.merged
    assert shown.rule.startswith("Raw attention weights")


def test_reading_options_compose_and_say_so():
    shown = for_reading(piece_alignment(), hide=True, merge=True)
    assert shown.alignment.source_tokens == ["das", "hausgarten"] and shown.merged
    assert shown.note == "pieces merged into words; <eos> hidden, rows renormalised"
    assert "columns summed" in shown.rule and "renormalised" in shown.rule
    np.testing.assert_allclose(shown.alignment.weights.sum(axis=1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("transform", [merged_pieces, without_eos])
def test_an_n_best_list_that_holds_the_decode_itself_is_transformed_once(transform):
    best, other = piece_alignment(), piece_alignment(seed=1)
    best.hypotheses = [best, other]  # beam search lists the best decode first, as itself
    shown = transform(best)
    assert shown.hypotheses[0] is shown
    assert shown.hypotheses[1].source_tokens == shown.source_tokens


def test_hiding_eos_on_a_local_p_figure_keeps_each_rows_total():
    al = piece_alignment(["a", "b", "c", "<eos>"], ["x", "y", "z", "<eos>"])
    w = np.array([[0.1, 0.2, 0.04, 0.0], [0.0, 0.1, 0.2, 0.1], [0.3, 0.1, 0.0, 0.0], [0.0, 0.0, 0.1, 0.5]])
    al = replace(al, weights=w.astype(np.float32), score="local_p")  # rows under 1: the Gaussian after the softmax
    shown = for_reading(al, hide=True, merge=False)
    np.testing.assert_allclose(shown.alignment.weights[0], [0.1, 0.2, 0.04], rtol=1e-6)  # nothing on <eos>: as is
    np.testing.assert_allclose(shown.alignment.weights.sum(axis=1), w.sum(axis=1), rtol=1e-6)
    assert shown.rule.endswith("so each row keeps its total (less than 1).")


def test_two_decodes_part_where_they_first_write_different_tokens():
    def decode(target):
        return piece_alignment(["a", "b", "c", "<eos>"], target)

    assert parting_step(decode(["x", "y", "z", "<eos>"]), decode(["x", "q", "z", "<eos>"])) == 1
    assert parting_step(decode(["x", "y", "z", "<eos>"]), decode(["x", "y", "z", "<eos>"])) is None
    assert parting_step(decode(["x", "y", "<eos>", "<eos>"]), decode(["x", "y", "z", "<eos>"])) == 2
    assert parting_step(decode(["x", "y", "z", "<eos>"]), decode(["x", "y", "z", "w"])) is None  # only the last
