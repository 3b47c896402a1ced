"""Batched beam search gives every sentence what one-sentence beam search gives it: the same n-best
tokens and scores for every score in both styles (input feeding, local-p, LSTM too), beam 1 equal to
greedy, the same texts with <unk> replaced, the same evaluation; batches kept to a token budget."""

from __future__ import annotations

import copy
import importlib
import random

import numpy as np
import pytest
import torch

from attnviz.data.vocab import BOS_ID, EOS_ID, UNK_ID
from attnviz.decoding.beam import beam_batch, budget_batches, padded
from attnviz.decoding.search import beam_search, greedy
from attnviz.evaluation.evaluate import evaluate
from tests.support.tiny import CASES, VOCAB, tiny_model

EXTRA = [
    ("general", "luong", {"input_feeding": True}),
    ("local_p", "luong", {"input_feeding": True}),
    ("location", "luong", {"input_feeding": True}),
    ("additive", "bahdanau", {"encoder": "lstm", "cell": "lstm"}),
]
MODELS = [(score, style, {}) for score, style in CASES] + EXTRA


def sentences(n: int = 30, seed: int = 0) -> tuple[list[list[int]], list[int]]:
    """``n`` sources of 1 to 11 tokens + <eos>, and a step limit for each: every third one short
    enough (3 steps) that beam search stops at it with beams still alive."""
    rng = random.Random(seed)
    ids = [[rng.randrange(EOS_ID + 1, VOCAB) for _ in range(rng.randint(1, 11))] + [EOS_ID] for _ in range(n)]
    limits = [3 if i % 3 == 0 else 2 * len(x) + 10 for i, x in enumerate(ids)]
    return ids, limits


def assert_same(alone: list, batched: list) -> None:
    """The same hypotheses in the same order, each token's log-probability within 1e-5."""
    assert [h.tokens for h in batched] == [h.tokens for h in alone]
    for a, b in zip(alone, batched, strict=True):
        np.testing.assert_allclose(b.token_log_probs, a.token_log_probs, atol=1e-5, rtol=0)
        assert b.score == pytest.approx(a.log_prob / len(a.tokens), abs=1e-5)


@pytest.mark.parametrize(("score", "style", "options"), MODELS, ids=lambda v: str(v) if v else "")
def test_batched_beam_gives_each_sentence_its_own_nbest(score, style, options):
    model = tiny_model(score, style, **options)
    ids, limits = sentences()
    src, lengths = padded(ids, torch.device("cpu"))  # [30, 12], [30]
    hit_limit = 0
    for beam in (1, 3, 5):
        batched = beam_batch(model, src, lengths, beam, limits, n_best=beam)
        for x, limit, nbest in zip(ids, limits, batched, strict=True):
            alone = beam_search(model, x, beam, limit, n_best=beam)
            assert_same(alone, nbest)
            hit_limit += len(alone[0].tokens) == limit and alone[0].tokens[-1] != EOS_ID
    assert hit_limit  # some sentences were cut by max_len


def test_a_beam_wider_than_the_vocabulary_allows_and_one_limit_for_all():
    model = tiny_model("general", "luong")
    ids, _ = sentences(12, seed=1)
    src, lengths = padded(ids, torch.device("cpu"))
    for nbest, x in zip(beam_batch(model, src, lengths, 10, max_len=9, n_best=20), ids, strict=True):
        assert_same(beam_search(model, x, 10, 9, n_best=20), nbest)  # 2 x 10 candidates > 15 words at the first step


@pytest.mark.parametrize(("score", "style", "options"), MODELS[::3] + EXTRA[:1], ids=str)
def test_batched_beam_one_is_greedy(score, style, options):
    model = tiny_model(score, style, **options)
    ids, limits = sentences()
    src, lengths = padded(ids, torch.device("cpu"))
    for x, limit, (best,) in zip(ids, limits, beam_batch(model, src, lengths, 1, limits), strict=True):
        hyp = greedy(model, x, limit)
        assert best.tokens == hyp.tokens
        np.testing.assert_allclose(best.token_log_probs, hyp.token_log_probs, atol=1e-5, rtol=0)
        real = len(x) - 1  # the most attended real word (not <eos>) at each step, for <unk> copies
        assert best.attended == [int(np.argmax(w[:real])) for w in hyp.weights]


@pytest.fixture(scope="module")
def unk_model(trained):
    """The trained reverse model, made to say <unk> at about half of its steps."""
    tr = copy.deepcopy(trained)
    with torch.no_grad():
        logits = tr.model.decoder.out.bias
        logits[UNK_ID] = logits.max() + 10.0
    return tr


TEXTS = [
    "a b c d",
    "h g f e d c b a",
    "a Zebra b",
    "Yak c Yak",
    "d",
    "b b b b b b",
    "e f Gnu h a",
    "c a",
    "a , b ; c .",
]


@pytest.mark.parametrize("beam", [1, 2, 5])
@pytest.mark.parametrize("replace_unk", [True, False])
def test_translate_batch_gives_the_texts_of_translate(unk_model, beam, replace_unk):
    alone = [unk_model.text_of(unk_model.translate(t, beam_size=beam), replace_unk) for t in TEXTS]
    assert unk_model.translate_batch(TEXTS, replace_unk=replace_unk, beam_size=beam) == alone
    assert unk_model.translate_batch(TEXTS, replace_unk=replace_unk, beam_size=beam, max_tokens=1) == alone
    if replace_unk:
        words = " ".join(alone).split()
        assert "<unk>" not in words and {"Yak", "Gnu", "Zebra"} & set(words)  # unknown words copied
        assert not set(alone[-1]) & set(",;.")  # an <unk> copies a word, never punctuation
    else:
        assert "<unk>" in " ".join(alone).split()


@pytest.mark.parametrize("token", ["<eos>", "<bos>"])
@pytest.mark.parametrize("beam", [1, 3])
def test_a_sentence_decodes_in_a_batch_as_it_does_alone(trained, token, beam):
    """A model that never ends (<eos> made unlikely) runs to each sentence's own step limit, not to its
    batch's longest; one that writes <bos> (made likely) keeps it in the text, as translate does. (Greedy
    batches ran every sentence to the longest one's limit, so a line of a file decoded on to 52 words
    beside a long line and to 20 alone, and they dropped <pad> and <bos>.)"""
    tr = copy.deepcopy(trained)
    with torch.no_grad():
        bias = tr.model.decoder.out.bias
        if token == "<eos>":
            bias[EOS_ID] = bias.min() - 100.0
        else:
            bias[BOS_ID] = bias.max() + 100.0
    texts = ["a b", "h g f e d c b a a b c d e f g h"]
    alone = [tr.text_of(tr.translate(t, beam_size=beam)) for t in texts]
    assert (
        tr.translate_batch(texts, beam_size=beam)
        == alone
        == [tr.translate_batch([t], beam_size=beam)[0] for t in texts]
    )
    if token == "<eos>":
        assert len(alone[0].split()) == tr.default_max_len(len(tr.source("a b").ids)) < len(alone[1].split())
    else:
        assert "<bos>" in alone[0].split()


def test_translate_batch_with_a_step_limit_and_sources(trained):
    texts = ["a b c d e f", "b a"]
    alone = [trained.text_of(trained.translate(t, beam_size=3, max_len=2)) for t in texts]
    sources = [trained.source(t) for t in texts]
    assert trained.translate_batch(sources, beam_size=3, max_len=2) == alone


def test_evaluate_with_a_beam_measures_what_one_sentence_at_a_time_did(trained, corpus, monkeypatch):
    pairs = corpus.test + corpus.train[:12]
    batched = evaluate(trained, pairs, beam_size=5)

    def one_at_a_time(translator, pairs, beam_size=1, replace_unk=True, sources=None):  # sources: unused here
        return [translator.text_of(translator.translate(p.source, beam_size), replace_unk) for p in pairs], 0

    monkeypatch.setattr(importlib.import_module("attnviz.evaluation.evaluate"), "translate_all", one_at_a_time)
    assert evaluate(trained, pairs, beam_size=5).to_dict() == batched.to_dict()
    assert batched.examples == evaluate(trained, pairs, beam_size=5).examples


def test_budget_batches_cover_every_sentence_within_the_budget():
    lengths = [5, 40, 3, 3, 12, 7, 90, 1]
    batches = budget_batches(lengths, beam_size=5, max_tokens=400)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for b in batches:
        assert len(b) == 1 or len(b) * 5 * max(lengths[i] for i in b) <= 400
        assert lengths[b[0]] == max(lengths[i] for i in b)
    assert [6] in batches  # longer than the budget allows: alone
    assert budget_batches([], 5, 400) == []
