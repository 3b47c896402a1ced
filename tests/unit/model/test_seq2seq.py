"""The whole encoder-decoder: every configuration trains (gradients reach every parameter), and
logits asked at the scored positions only are the full ones."""

import pytest
import torch

from attnviz.model.config import ModelConfig
from attnviz.model.scores import SCORES
from attnviz.model.seq2seq import build_model

CONFIGS = [{"style": style, "score": score} for style in ("bahdanau", "luong") for score in sorted(SCORES)] + [
    {"style": "luong", "score": "general", "input_feeding": True},
    {"style": "luong", "score": "dot", "encoder": "lstm", "cell": "lstm", "enc_layers": 2, "dec_layers": 2},
    {"style": "bahdanau", "score": "additive", "encoder": "transformer", "heads": 2, "enc_layers": 2},
    {"style": "bahdanau", "score": "additive", "tie_embeddings": True, "bidirectional": False},
]


def _batch():
    g = torch.Generator().manual_seed(0)
    src = torch.randint(4, 30, (3, 7), generator=g)
    lengths = torch.tensor([7, 5, 2])
    for row, n in enumerate(lengths):
        src[row, n:] = 0
    return src, lengths, torch.randint(4, 40, (3, 6), generator=g)


@pytest.mark.parametrize("options", CONFIGS, ids=lambda o: "-".join(str(v) for v in o.values()))
def test_gradients_reach_every_parameter(options):
    cfg = ModelConfig(30, 40, emb_dim=16, hidden_dim=12, attn_dim=8, dropout=0.0, **options)
    model = build_model(cfg, seed=0)
    src, lengths, tgt = _batch()
    out = model(src, lengths, tgt)
    assert out.logits.shape == (3, 6, 40)
    assert torch.all(out.attention.weights[2, :, 2:] == 0)  # padding of the short row
    out.logits.logsumexp(-1).sum().backward()
    for name, p in model.named_parameters():
        if name == "encoder.embedding.weight" or name.endswith("embedding.weight"):
            continue  # rows of unused tokens get no gradient; the used rows are checked below
        assert p.grad is not None and p.grad.abs().sum() > 0, name
    assert model.encoder.embedding.weight.grad[src[0]].abs().sum() > 0


@pytest.mark.parametrize("options", CONFIGS[:2] + CONFIGS[-4:], ids=lambda o: "-".join(str(v) for v in o.values()))
@pytest.mark.parametrize("teacher_forcing", [1.0, 0.5])
def test_scored_positions_get_the_same_logits(options, teacher_forcing):
    """Training asks for logits at real target tokens only: the same numbers as the full [B, T, V]."""
    cfg = ModelConfig(30, 40, emb_dim=16, hidden_dim=12, attn_dim=8, dropout=0.0, **options)
    model = build_model(cfg, seed=0).eval()
    src, lengths, tgt = _batch()
    tgt[1, 4:], tgt[2, 2:] = 0, 0  # padded targets
    scored = tgt != 0
    torch.manual_seed(1)
    full = model(src, lengths, tgt, teacher_forcing).logits  # [B, T, V]
    torch.manual_seed(1)
    some = model(src, lengths, tgt, teacher_forcing, scored=scored).logits  # [N, V]
    assert some.shape == (int(scored.sum()), 40)
    assert torch.allclose(some, full[scored], atol=1e-6)
