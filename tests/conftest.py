"""Shared fixtures: tiny corpora and tiny models that train in seconds on a CPU."""

from __future__ import annotations

import pytest
import torch

from attnviz.data.pairs import Corpus, make_pair
from attnviz.data.tokenize import Tokenizer
from attnviz.training.config import TrainConfig
from attnviz.training.fit import build_translator, fit

torch.set_num_threads(1)

WORD = Tokenizer("word", lowercase=True)
TINY_OPTIONS = {"emb_dim": 16, "hidden_dim": 24, "attn_dim": 12, "dropout": 0.0}


def reverse_corpus(n: int = 40, seed: int = 0) -> Corpus:
    """Sentences of letters and their reversal, with anti-diagonal gold links."""
    g = torch.Generator().manual_seed(seed)
    pairs = []
    for _ in range(n):
        length = int(torch.randint(3, 7, (1,), generator=g))
        letters = [chr(ord("a") + int(i)) for i in torch.randint(0, 8, (length,), generator=g)]
        sure = [(i, length - 1 - i) for i in range(length)]
        pairs.append(make_pair(" ".join(letters), " ".join(reversed(letters)), WORD, WORD, sure))
    return Corpus("reverse-test", pairs, pairs[:8], pairs[:8], WORD, WORD, True, [])


@pytest.fixture(scope="session")
def corpus() -> Corpus:
    return reverse_corpus()


def tiny_translator(corpus: Corpus, score: str = "additive", style: str = "bahdanau", **options):
    return build_translator(corpus, seed=0, score=score, style=style, **{**TINY_OPTIONS, **options})


@pytest.fixture(scope="session")
def trained(corpus):
    """A tiny additive/Bahdanau model trained until it reverses its training data."""
    tr = tiny_translator(corpus, emb_dim=32, hidden_dim=48, attn_dim=32)
    fit(tr, corpus, TrainConfig(epochs=60, batch_size=8, lr=1e-2, patience=None, seed=0))
    return tr
