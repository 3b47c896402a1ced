"""The Alignment trace: an <unk> copies the most attended real source word, whole words from a
subword source, the unknown words named as the user typed them."""

import math

import numpy as np
import pytest

from attnviz.decoding import argmax_links
from tests.support.alignments import alignment_of


def test_unk_copies_the_most_attended_real_source_word():
    weights = np.array([[0.1, 0.1, 0.8], [0.3, 0.1, 0.6], [0.2, 0.7, 0.1]])  # [tgt, src]; <eos> wins step 1
    al = alignment_of(weights, ["Zoe", "runs", "<eos>"], ["la", "<unk>", "<eos>"], [True, False, False])
    assert al.unk_copies() == {1: 0}  # <eos> is never copied: the best real word is "Zoe"
    assert al.display_tokens() == ["la", "Zoe"]
    assert al.display_tokens(replace_unk=False) == ["la", "<unk>"]
    assert al.to_dict()["unk_copies"] == {"1": 0}


def test_an_unk_copies_a_word_not_the_punctuation_it_attends_to_most():
    weights = np.array([[0.1, 0.6, 0.2, 0.1], [0.1, 0.2, 0.1, 0.6]])  # [tgt, src]: "," wins step 0
    al = alignment_of(weights, ["emails", ",", "Zoe", "<eos>"], ["<unk>", "<eos>"], [True, False, True, False])
    assert al.unk_copies() == {0: 2} and al.display_tokens() == ["Zoe"]
    only = alignment_of(np.array([[0.3, 0.6, 0.1]]), [",", "!", "<eos>"], ["<unk>"], [False, False, False])
    assert only.display_tokens() == ["!"]  # a source of punctuation alone: the most attended token


def test_unk_copies_whole_words_from_a_subword_source():
    """Pieces are never copied into the output: the attended piece's word is, once per run."""
    source = ["Zwei", "Xylo@@", "phon@@", "spieler", "Tor", "<eos>"]
    weights = np.full((4, 6), 0.01)
    weights[0, 0] = weights[1, 1] = weights[2, 3] = weights[3, 4] = 0.95  # two <unk> steps on one word
    unknown = [False, True, True, True, False, False]
    al = alignment_of(weights, source, ["Two", "<unk>", "<unk>", "<unk>"], unknown)
    assert al.display_tokens() == ["Two", "Xylophonspieler", "Tor"]
    assert al.source_word(2) == "Xylophonspieler" and al.source_word(4) == "Tor"


def test_unknown_words_name_a_piece_with_the_word_it_cuts_once_each():
    source = ["Zx@@", "q@@", "wv", "Zoe", "Zoe", "ein", "<eos>"]
    al = alignment_of(np.full((2, 7), 1 / 7), source, ["a", "<eos>"], [False, True, False, True, True, False, False])
    assert al.unknown_words() == [("q", "Zxqwv"), ("Zoe", "Zoe")]


def test_the_json_trace_keeps_tiny_weights_apart():
    from attnviz.external import attention_json, read_attention, word_links
    from tests.support.alignments import make_alignment

    al = make_alignment(["a", "b", "c"], ["x", "y"])
    al.weights[0] = [3.98123e-07, 7.32456e-07, 1.76e-09, 1 - 1.13e-06]  # nearly all of the row on <eos>
    written = al.to_dict()["weights"]
    assert written[0][:3] == [3.98123e-07, 7.32456e-07, 1.76e-09]  # 6 significant digits, not decimals
    assert written[1] == [float(f"{w:.6g}") for w in al.weights[1]]
    back = next(iter(read_attention(attention_json(al).encode()).alignments.values()))
    assert word_links(back).links == word_links(al).links  # <eos> hidden: the first row still links b


def test_the_json_trace_writes_rounded_weights_without_float_noise():
    """1.8733701e-21 rounds to 1.87337e-21 and is written so, not as 1.8733699999999997e-21."""
    import json

    from tests.support.alignments import make_alignment

    al = make_alignment(["a", "b", "c"], ["x", "y"])
    al.weights[0] = [1.8733701e-21, 1.9075498e-29, 1.16316e-20, 1.0]
    text = json.dumps(al.to_dict()["weights"][0])
    assert text == "[1.87337e-21, 1.90755e-29, 1.16316e-20, 1.0]"


# 2 target steps x 3 source positions: step 0 reads source 2, step 1 reads source 0
WEIGHTS = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])


def test_argmax_links_are_source_then_target():
    assert argmax_links(WEIGHTS) == {(2, 0), (0, 1)}
    al = alignment_of(WEIGHTS, ["x", "y", "<eos>"], ["a", "b"], [False] * 3)
    assert al.hard_links() == [(2, 0), (0, 1)]
    assert al.to_pharaoh() == "2-0 0-1"


def test_coverage_is_the_attention_each_source_position_received():
    al = alignment_of(WEIGHTS, ["x", "y", "<eos>"], ["a", "b"], [False] * 3)
    np.testing.assert_allclose(al.coverage(), [0.6, 0.45, 0.95])
    np.testing.assert_allclose(al.to_dict()["coverage"], [0.6, 0.45, 0.95])


def test_entropy_is_one_number_per_step_in_nats():
    al = alignment_of(WEIGHTS, ["x", "y", "<eos>"], ["a", "b"], [False] * 3)
    expected = [-sum(p * math.log(p) for p in row) for row in WEIGHTS]
    assert al.entropy() == pytest.approx(expected)
