"""The RNN encoder without packing equals the packed RNN, value and gradient; the reverse index."""

import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from attnviz.model.config import ModelConfig
from attnviz.model.encoder import RNNEncoder, reverse_index


def _packed_reference(enc, src, lengths):
    """What the encoder computed with pack_padded_sequence (annotations zero at padding)."""
    emb = enc.embedding(src)
    out, final = enc.rnn(pack_padded_sequence(emb, lengths, batch_first=True, enforce_sorted=False))
    memory, _ = pad_packed_sequence(out, batch_first=True, total_length=src.size(1))
    h_n = final[0] if isinstance(final, tuple) else final  # [layers * dirs, B, H]
    last = h_n.view(-1, enc.directions, src.size(0), h_n.size(-1))[-1]  # [dirs, B, H]
    return memory, torch.cat(list(last), dim=-1)


@pytest.mark.parametrize("cell", ["gru", "lstm"])
@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("layers", [1, 2])
def test_unpacked_encoder_equals_the_packed_rnn(cell, bidirectional, layers):
    torch.manual_seed(0)
    cfg = ModelConfig(20, 20, encoder=cell, bidirectional=bidirectional, enc_layers=layers, emb_dim=8, hidden_dim=6)
    enc = RNNEncoder(cfg).eval()
    lengths = torch.tensor([5, 2, 7, 1])
    src = torch.zeros(4, 7, dtype=torch.long)  # [B, S] padded with PAD_ID = 0
    for row, n in enumerate(lengths.tolist()):
        src[row, :n] = torch.randint(4, 20, (n,))
    memory, summary = _packed_reference(enc, src, lengths)
    out = enc(src, lengths)
    assert torch.allclose(out.memory, memory, atol=1e-6)
    assert torch.allclose(out.summary, summary, atol=1e-6)
    grads = torch.autograd.grad(out.memory.sum() + out.summary.sum(), list(enc.rnn.parameters()))
    expected = torch.autograd.grad(memory.sum() + summary.sum(), list(enc.rnn.parameters()))
    assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(grads, expected, strict=True))


def test_reverse_index_reverses_within_each_length():
    assert reverse_index(torch.tensor([3, 1, 4]), 4).tolist() == [[2, 1, 0, 3], [0, 1, 2, 3], [3, 2, 1, 0]]
