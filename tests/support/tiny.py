"""Tiny corpora and tiny models that train in seconds on a CPU; tiny ``Seq2Seq`` models of every score
and style with a padded batch, to compare the teacher-forced path with stepping the decoder."""

from __future__ import annotations

import torch

from attnviz.data.pairs import Corpus, make_pair
from attnviz.data.tokenize import Tokenizer
from attnviz.data.vocab import BOS_ID, EOS_ID, PAD_ID
from attnviz.model.config import ModelConfig
from attnviz.model.scores import SCORES
from attnviz.model.seq2seq import build_model
from attnviz.training.fit import build_translator

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


def tiny_translator(corpus: Corpus, score: str = "additive", style: str = "bahdanau", **options):
    return build_translator(corpus, seed=0, score=score, style=style, **{**TINY_OPTIONS, **options})


VOCAB = 15


def tiny_model(score: str, style: str, **options):
    cfg = ModelConfig(
        src_vocab_size=VOCAB,
        tgt_vocab_size=VOCAB,
        score=score,
        style=style,
        emb_dim=6,
        hidden_dim=8,
        attn_dim=5,
        max_src_len=12,
        window=2,
        **options,
    )
    return build_model(cfg, seed=0).eval()


def padded_batch(vocab: int = VOCAB):
    """Three padded sources of lengths 7, 4, 6 and their target inputs, ids below ``vocab``."""
    generator = torch.Generator().manual_seed(1)
    lengths = torch.tensor([7, 4, 6])
    src = torch.randint(EOS_ID + 1, vocab, (3, 7), generator=generator)  # [B, S]
    src[torch.arange(7).unsqueeze(0) >= lengths.unsqueeze(1)] = PAD_ID
    tgt_in = torch.randint(EOS_ID + 1, vocab, (3, 5), generator=generator)  # [B, T]
    tgt_in[:, 0] = BOS_ID
    return src, lengths, tgt_in


CASES = [(score, style) for score in sorted(SCORES) for style in ("bahdanau", "luong")]
