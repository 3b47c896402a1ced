"""Property tests (hypothesis) of the model and decoding on random tiny models: a padded batch gives
each sentence the attention it gets alone, for every score function in the registry (local-m,
local-p and location included) and both decoder styles, and input feeding, LSTMs, two layers and a
Transformer encoder, with random lengths; weights are a
distribution that is 0 on padding; batched greedy and beam search give what one-at-a-time search does."""

from __future__ import annotations

from functools import cache

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnviz.data.vocab import BOS_ID, EOS_ID
from attnviz.decoding.beam import beam_batch, padded
from attnviz.decoding.search import beam_search, greedy, greedy_batch
from tests.support.tiny import CASES, VOCAB, tiny_model

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True)
LOCAL_P = "local_p"  # its Gaussian leaves a row's sum below 1 (Alignment.weights' comment)


@cache
def model_of(score: str, style: str, options: tuple = ()):
    return tiny_model(score, style, **dict(options))


# beyond the registry's defaults: input feeding, LSTMs, two layers a side, a Transformer encoder
VARIANTS = [(score, style, ()) for score, style in CASES] + [
    ("general", "luong", (("input_feeding", True),)),
    ("local_p", "luong", (("input_feeding", True), ("cell", "lstm"))),
    ("additive", "bahdanau", (("encoder", "lstm"), ("cell", "lstm"))),
    ("location", "bahdanau", (("enc_layers", 2), ("dec_layers", 2))),
    ("general", "luong", (("encoder", "transformer"), ("heads", 2))),
]


def sentence(max_len: int = 11):
    body = st.lists(st.integers(EOS_ID + 1, VOCAB - 1), min_size=0, max_size=max_len - 1)
    return body.map(lambda x: [*x, EOS_ID])


batches = st.lists(sentence(), min_size=1, max_size=4)


@SETTINGS
@given(st.sampled_from(VARIANTS), batches, st.integers(1, 5), st.randoms(use_true_random=False))
@torch.no_grad()
def test_padded_batch_attention_is_each_sentence_alone(case, sources, n_tgt, rnd):
    model = model_of(*case)
    src, lengths = padded(sources, torch.device("cpu"))
    tgt_in = torch.tensor([[BOS_ID] + [rnd.randrange(EOS_ID + 1, VOCAB) for _ in range(n_tgt - 1)] for _ in sources])
    out = model(src, lengths, tgt_in)
    w = out.attention.weights  # [B, T, S]
    for b, x in enumerate(sources):
        s = len(x)
        alone = model(torch.tensor([x]), torch.tensor([s]), tgt_in[b : b + 1])
        torch.testing.assert_close(w[b, :, :s], alone.attention.weights[0], atol=1e-5, rtol=0)
        torch.testing.assert_close(out.logits[b], alone.logits[0], atol=1e-4, rtol=0)
        assert (w[b, :, s:] == 0).all()  # nothing on padding
        assert (w[b] >= 0).all()
        sums = w[b].sum(-1)
        if case[0] == LOCAL_P:
            assert (sums <= 1 + 1e-5).all()
        else:
            torch.testing.assert_close(sums, torch.ones_like(sums), atol=1e-5, rtol=0)


@SETTINGS
@given(st.sampled_from(VARIANTS), batches, st.integers(1, 9))
@torch.no_grad()
def test_greedy_batch_is_greedy_alone(case, sources, max_len):
    model = model_of(*case)
    src, lengths = padded(sources, torch.device("cpu"))
    for x, (ids, _) in zip(sources, greedy_batch(model, src, lengths, max_len), strict=True):
        alone = greedy(model, x, max_len).tokens
        assert ids == [t for t in alone if t != EOS_ID]


@settings(max_examples=15, deadline=None, derandomize=True)
@given(st.sampled_from(VARIANTS), batches, st.integers(1, 4), st.lists(st.integers(1, 9), min_size=4, max_size=4))
@torch.no_grad()
def test_beam_batch_is_beam_alone(case, sources, beam, limits):
    model = model_of(*case)
    limits = limits[: len(sources)]
    src, lengths = padded(sources, torch.device("cpu"))
    for x, limit, nbest in zip(
        sources, limits, beam_batch(model, src, lengths, beam, limits, n_best=beam), strict=True
    ):
        alone = beam_search(model, x, beam, limit, n_best=beam)
        assert [h.tokens for h in nbest] == [h.tokens for h in alone]
        for a, b in zip(nbest, alone, strict=True):
            np.testing.assert_allclose(a.token_log_probs, b.token_log_probs, atol=1e-4, rtol=0)
