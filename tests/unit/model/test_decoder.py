"""The fast teacher-forced paths compute exactly what stepping the decoder computes.

Training uses ``model(src, lengths, tgt_in)`` (Bahdanau: batched output layer; Luong without
input feeding: one RNN call and one batched attention product); decoding uses
``model.decoder.step``. Both must give the same logits, for every score and both styles.
"""

import pytest
import torch

from tests.support.tiny import CASES, padded_batch, tiny_model


def _stepped_logits(model, src, lengths, tgt_in) -> torch.Tensor:
    enc = model.encode(src, lengths)
    state, logits = enc.state, []
    for t in range(tgt_in.size(1)):
        out, state = model.decoder.step(tgt_in[:, t], state, enc.memory, t)
        logits.append(out.logits)  # [B, 1, V]
    return torch.cat(logits, dim=1)  # [B, T, V]


@pytest.mark.parametrize(("score", "style"), CASES)
@torch.no_grad()
def test_teacher_forced_logits_equal_stepped_logits(score, style):
    model = tiny_model(score, style)
    src, lengths, tgt_in = padded_batch()
    fast = model(src, lengths, tgt_in)
    torch.testing.assert_close(fast.logits, _stepped_logits(model, src, lengths, tgt_in), atol=1e-5, rtol=0)


@pytest.mark.parametrize(
    "options",
    [{"cell": "lstm"}, {"dec_layers": 2}, {"style": "luong", "input_feeding": True}, {"tie_embeddings": True}],
)
@torch.no_grad()
def test_other_decoders_still_match_stepping(options):
    model = tiny_model("additive", options.pop("style", "bahdanau"), **options)
    src, lengths, tgt_in = padded_batch()
    fast = model(src, lengths, tgt_in).logits
    torch.testing.assert_close(fast, _stepped_logits(model, src, lengths, tgt_in), atol=1e-5, rtol=0)


def test_state_dict_keys_are_unchanged():
    keys = set(tiny_model("additive", "bahdanau").state_dict())
    assert {"decoder.rnn.weight_ih_l0", "decoder.rnn.weight_hh_l0", "decoder.rnn.bias_ih_l0"} <= keys
    assert not any("cell" in k for k in keys)


@pytest.mark.parametrize("input_feeding", [False, True])
@torch.no_grad()
def test_luong_step_by_the_papers_formulas(input_feeding):
    model = tiny_model("general", "luong", input_feeding=input_feeding)
    decoder = model.decoder
    src, lengths, tgt_in = padded_batch()
    enc = model.encode(src, lengths)
    state = enc.state
    if input_feeding:
        assert torch.equal(state.feed, torch.zeros_like(state.feed))  # h~_0 = 0
    for t in range(3):
        out, state = decoder.step(tgt_in[:, t], state, enc.memory, t)
        h_t, c_t = out.queries[:, 0], out.attention.context[:, 0]  # [B, H], [B, K]
        W_c = decoder.W_c.weight  # [H, K + H]: the context's columns first
        K = c_t.size(-1)
        h_tilde = torch.tanh(c_t @ W_c[:, :K].T + h_t @ W_c[:, K:].T)  # [B, H]
        torch.testing.assert_close(out.logits[:, 0], decoder.generate(h_tilde), atol=1e-5, rtol=0)
        if input_feeding:
            torch.testing.assert_close(state.feed, h_tilde, atol=1e-6, rtol=0)  # h~_t feeds step t + 1
