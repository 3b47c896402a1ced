"""The fast teacher-forced paths compute exactly what stepping the decoder computes.

Training uses ``model(src, lengths, tgt_in)`` (Bahdanau: batched output layer; Luong without
input feeding: one RNN call and one batched attention product); decoding uses
``model.decoder.step``. Both must give the same logits, for every score and both styles.
"""

import pytest
import torch

from attnviz.data.vocab import BOS_ID, EOS_ID, PAD_ID
from attnviz.decoding.search import greedy
from attnviz.model.config import ModelConfig
from attnviz.model.scores import SCORES
from attnviz.model.seq2seq import build_model

VOCAB = 15


def _model(score: str, style: str, **options):
    cfg = ModelConfig(
        src_vocab_size=VOCAB, tgt_vocab_size=VOCAB, score=score, style=style, emb_dim=6, hidden_dim=8,
        attn_dim=5, max_src_len=12, window=2, **options,
    )  # fmt: skip
    return build_model(cfg, seed=0).eval()


def _batch():
    generator = torch.Generator().manual_seed(1)
    lengths = torch.tensor([7, 4, 6])
    src = torch.randint(EOS_ID + 1, VOCAB, (3, 7), generator=generator)  # [B, S]
    src[torch.arange(7).unsqueeze(0) >= lengths.unsqueeze(1)] = PAD_ID
    tgt_in = torch.randint(EOS_ID + 1, VOCAB, (3, 5), generator=generator)  # [B, T]
    tgt_in[:, 0] = BOS_ID
    return src, lengths, tgt_in


def _stepped_logits(model, src, lengths, tgt_in) -> torch.Tensor:
    enc = model.encode(src, lengths)
    state, logits = enc.state, []
    for t in range(tgt_in.size(1)):
        out, state = model.decoder.step(tgt_in[:, t], state, enc.memory, t)
        logits.append(out.logits)  # [B, 1, V]
    return torch.cat(logits, dim=1)  # [B, T, V]


CASES = [(score, style) for score in sorted(SCORES) for style in ("bahdanau", "luong")]


@pytest.mark.parametrize(("score", "style"), CASES)
@torch.no_grad()
def test_teacher_forced_logits_equal_stepped_logits(score, style):
    model = _model(score, style)
    src, lengths, tgt_in = _batch()
    fast = model(src, lengths, tgt_in)
    torch.testing.assert_close(fast.logits, _stepped_logits(model, src, lengths, tgt_in), atol=1e-5, rtol=0)


@pytest.mark.parametrize(("score", "style"), CASES)
def test_greedy_agrees_with_forced_decoding_of_its_own_output(score, style):
    model = _model(score, style)
    src_ids = [5, 9, 4, 12, 7, EOS_ID]
    hyp = greedy(model, src_ids, max_len=8)
    tgt_in = torch.tensor([[BOS_ID, *hyp.tokens[:-1]]])  # [1, T]
    with torch.no_grad():
        out = model(torch.tensor([src_ids]), torch.tensor([len(src_ids)]), tgt_in)
    assert out.logits[0].argmax(-1).tolist() == hyp.tokens
    torch.testing.assert_close(out.attention.weights[0], torch.from_numpy(hyp.weights), atol=1e-5, rtol=0)


@pytest.mark.parametrize(
    "options",
    [{"cell": "lstm"}, {"dec_layers": 2}, {"style": "luong", "input_feeding": True}, {"tie_embeddings": True}],
)
@torch.no_grad()
def test_other_decoders_still_match_stepping(options):
    model = _model("additive", options.pop("style", "bahdanau"), **options)
    src, lengths, tgt_in = _batch()
    fast = model(src, lengths, tgt_in).logits
    torch.testing.assert_close(fast, _stepped_logits(model, src, lengths, tgt_in), atol=1e-5, rtol=0)


def test_state_dict_keys_are_unchanged():
    keys = set(_model("additive", "bahdanau").state_dict())
    assert {"decoder.rnn.weight_ih_l0", "decoder.rnn.weight_hh_l0", "decoder.rnn.bias_ih_l0"} <= keys
    assert not any("cell" in k for k in keys)
