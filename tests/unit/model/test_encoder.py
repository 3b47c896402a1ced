"""The RNN encoder without packing equals the packed RNN, value and gradient; the reverse index; each
direction of each layer gets a cuDNN weight buffer of its own."""

import warnings

import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from attnviz.model import encoder as encoder_module
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


@pytest.fixture
def cudnn_on_cpu(monkeypatch):
    """Run the cuDNN branch of ``flatten_parameters`` on the CPU: each call is recorded and packs
    the weights into one new storage, as ``torch._cudnn_rnn_flatten_weight`` does on a GPU."""
    calls = []

    def pack(weights, mode, hidden_size):
        calls.append(([tuple(w.shape) for w in weights], mode, hidden_size))
        buffer = torch.cat([w.detach().reshape(-1) for w in weights])
        offset = 0
        with torch.no_grad():
            for w in weights:
                w.set_(buffer.untyped_storage(), offset, w.shape, w.stride())
                offset += w.numel()

    monkeypatch.setattr(encoder_module, "_uses_cudnn", lambda weights: True)
    monkeypatch.setattr(encoder_module, "_flatten_for_cudnn", pack)
    return calls


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_each_direction_of_each_layer_gets_a_weight_buffer_of_its_own_after_a_move(cudnn_on_cpu, cell):
    torch.manual_seed(0)
    cfg = ModelConfig(20, 20, encoder=cell, enc_layers=2, emb_dim=8, hidden_dim=6)
    enc = RNNEncoder(cfg).eval()
    src, lengths = torch.randint(4, 20, (3, 5)), torch.tensor([5, 5, 5])
    before = enc(src, lengths)
    enc.to("cpu")  # every move ends in flatten_parameters, after nn.GRU/nn.LSTM packed its own
    gates = 3 if cell == "gru" else 4
    layer_0 = ((gates * 6, 8), cell.upper())  # reads the embeddings
    layer_1 = ((gates * 6, 12), cell.upper())  # reads both directions of layer 0
    assert [(shapes[0], mode) for shapes, mode, _ in cudnn_on_cpu] == [layer_0, layer_0, layer_1, layer_1]
    storages = [
        {w.untyped_storage().data_ptr() for w in enc._weights(layer, suffix)}
        for layer in range(2)
        for suffix in ("", "_reverse")
    ]
    assert all(len(s) == 1 for s in storages) and len(set().union(*storages)) == 4
    after = enc(src, lengths)
    assert torch.equal(before.memory, after.memory) and torch.equal(before.summary, after.summary)


def test_flattening_is_a_no_op_on_the_cpu():
    enc = RNNEncoder(ModelConfig(20, 20, emb_dim=8, hidden_dim=6))
    pointers = [p.data_ptr() for p in enc.rnn.parameters()]
    enc.flatten_parameters()
    enc.to("cpu")
    assert [p.data_ptr() for p in enc.rnn.parameters()] == pointers


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_cudnn_uses_the_encoder_weights_in_place(cell, monkeypatch):
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)  # compare with the CPU in full float32
    torch.manual_seed(0)
    enc = RNNEncoder(ModelConfig(20, 20, encoder=cell, enc_layers=2, emb_dim=8, hidden_dim=6))
    src, lengths = torch.randint(4, 20, (3, 5)), torch.tensor([5, 3, 1])
    src[1, 3:], src[2, 1:] = 0, 0  # padding
    enc.eval()  # no dropout: the CPU and the GPU draw different masks
    expected = enc(src, lengths)
    enc.to("cuda")
    for layer in range(2):
        for suffix in ("", "_reverse"):
            weights = enc._weights(layer, suffix)
            assert weights[0].storage_offset() == 0  # each direction begins a buffer of its own
            assert len({w.untyped_storage().data_ptr() for w in weights}) == 1
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = enc(src.cuda(), lengths.cuda())
        trained = enc.train()(src.cuda(), lengths.cuda())  # cuDNN's backward runs in training mode only
        (trained.memory.sum() + trained.summary.sum()).backward()
    assert not [w for w in seen if "contiguous chunk" in str(w.message)]
    assert torch.allclose(out.memory.cpu(), expected.memory, atol=1e-5)
    assert torch.allclose(out.summary.cpu(), expected.summary, atol=1e-5)
