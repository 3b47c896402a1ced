"""Batched forced decoding gives every pair what forcing it alone gives: the same Alignment (weights,
scores, contexts, states, log-probabilities, local positions, encoder maps) for every score in both
styles (input feeding, a Transformer or LSTM encoder, an LSTM decoder of two layers too), in the
order given whatever the batches; the same evaluation and corpus links as pair by pair."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest

from attnviz.decoding.translator import Source, Target
from attnviz.errors import InputError
from attnviz.evaluation import metrics
from attnviz.evaluation.evaluate import evaluate
from attnviz.links.extract import align_corpus, align_words
from tests.support.tiny import CASES, reverse_corpus, tiny_translator

EXTRA = [
    ("general", "luong", {"input_feeding": True}),
    ("local_p", "luong", {"input_feeding": True}),
    ("additive", "bahdanau", {"encoder": "transformer", "heads": 2, "enc_layers": 2}),
    ("local_m", "luong", {"encoder": "lstm", "cell": "lstm", "dec_layers": 2}),
]
MODELS = [(score, style, {}) for score, style in CASES] + EXTRA
WORDS = [*"abcdefgh", "zebra"]  # zebra: <unk> to every tiny model
ARRAYS = ("weights", "scores", "contexts", "states", "token_log_probs", "positions", "encoder_attention")


def pairs(n: int = 13, seed: int = 0) -> tuple[list[str], list[str]]:
    """``n`` sources of 1 to 10 words and targets of 1 to 12, so that batches are padded on both sides."""
    rng = random.Random(seed)

    def sentence(longest: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, longest)))

    return [sentence(10) for _ in range(n)], [sentence(12) for _ in range(n)]


def assert_same(alone, batched) -> None:
    """Every field equal: tokens and names exactly, arrays within float rounding (-inf where alone has it)."""
    for name in ("source_tokens", "target_tokens", "source_unknown", "score", "style", "window", "hypotheses"):
        assert getattr(batched, name) == getattr(alone, name), name
    assert batched.log_prob == pytest.approx(alone.log_prob, abs=1e-5)
    for name in ARRAYS:
        a, b = getattr(alone, name), getattr(batched, name)
        assert (a is None) == (b is None), name
        if a is not None:
            assert b.shape == a.shape, name
            np.testing.assert_allclose(b, a, atol=1e-5, rtol=0, err_msg=name)  # inf positions must match too


@pytest.mark.parametrize(("score", "style", "options"), MODELS, ids=lambda v: str(v) if v else "")
def test_batched_forcing_gives_each_pair_its_own_alignment(score, style, options):
    tr = tiny_translator(reverse_corpus(), score=score, style=style, **options)
    sources, targets = pairs()
    alone = [tr.align(s, t) for s, t in zip(sources, targets, strict=True)]
    for batch_size in (1, 5, 64):  # one pair a batch, batches and a remainder, all at once
        batched = tr.align_batch(sources, targets, batch_size=batch_size)
        assert len(batched) == len(alone)
        for a, b in zip(alone, batched, strict=True):
            assert_same(a, b)
    assert (alone[0].positions is not None) == (score in ("local_m", "local_p"))
    assert (alone[0].encoder_attention is not None) == (options.get("encoder") == "transformer")


def test_align_batch_takes_given_words_and_checked_sides(trained):
    words = trained.align_batch([["a", "b.", "zebra"], "c d"], [["c", "a"], "d c"])
    assert_same(trained.align(["a", "b.", "zebra"], ["c", "a"]), words[0])
    checked = trained.align_batch([trained.source("c d")], [trained.target("d c")])
    assert isinstance(trained.source("c d"), Source) and isinstance(trained.target("d c"), Target)
    assert_same(words[1], checked[0])
    assert trained.align_batch([], []) == []


def test_align_batch_names_the_pair_it_cannot_read(trained):
    long = " ".join(["a"] * (trained.max_source_tokens + 1))
    with pytest.raises(InputError, match=r"pair 2: the sentence has \d+ tokens"):
        trained.align_batch(["a b", long], ["b a", "a"])
    with pytest.raises(InputError, match="pair 1: the target is empty"):
        trained.align_batch(["a b"], ["   "])
    with pytest.raises(InputError, match="2 sources but 1 targets"):
        trained.align_batch(["a", "b"], ["a"])
    with pytest.raises(InputError, match="batch_size must be at least 1"):
        trained.align_batch(["a"], ["a"], batch_size=-1)


def test_evaluate_forces_in_batches_with_the_figures_of_pair_by_pair(trained, corpus):
    long = replace(corpus.test[0], source=" ".join(["a"] * (trained.max_source_tokens + 1)))
    test = [*corpus.test, long]  # one pair the model cannot read: left out of entropy and AER
    report = evaluate(trained, test)
    readable = test[:-1]
    alone = [trained.align(p.source, p.target) for p in readable]
    assert report.entropy == pytest.approx(metrics.mean_entropy([al.weights for al in alone]), abs=1e-6)
    hard = [
        metrics.alignment_links(al, len(p.source_tokens), len(p.target_tokens))
        for al, p in zip(alone, readable, strict=True)
    ]
    assert report.aer == metrics.aer(hard, [p.sure for p in readable], [p.possible or p.sure for p in readable])
    assert report.skipped == 1


def test_corpus_links_are_those_of_each_pair_alone(trained):
    long = ["a"] * (trained.max_source_tokens + 1)
    sources = [[*"abcd"], [*"efg"], long, ["h", "zebra", "b"]]
    targets = [[*"dcba"], [*"gfe"], ["a"], ["b", "qq", "h"]]
    for method, reverse in (("argmax", None), ("threshold", None), ("dtw", None), ("grow-diag-final", trained)):
        aligned = align_corpus(trained, sources, targets, method, reverse)
        assert list(aligned.skipped) == [2] and "this model reads at most" in aligned.skipped[2]
        for k, links in enumerate(aligned.links):
            if k != 2:
                assert links == align_words(trained, sources[k], targets[k], method, reverse).links
    with pytest.raises(InputError, match="as the reverse model"):
        align_corpus(trained, sources, targets, "union")


@pytest.mark.parametrize(("score", "style"), [("additive", "bahdanau"), ("general", "luong")])
def test_forcing_without_log_probabilities_gives_the_same_attention(score, style):
    tr = tiny_translator(reverse_corpus(), score=score, style=style)
    sources, targets = pairs()
    full = tr.align_batch(sources, targets)
    bare = tr.align_batch(sources, targets, log_probs=False)  # no output layer: what evaluate and links read
    for a, b in zip(full, bare, strict=True):
        assert b.token_log_probs is None and np.isnan(b.log_prob)
        assert b.target_tokens == a.target_tokens
        for name in ("weights", "scores", "contexts", "states"):
            np.testing.assert_array_equal(getattr(b, name), getattr(a, name), err_msg=name)
