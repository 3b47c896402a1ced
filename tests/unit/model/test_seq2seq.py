"""The whole encoder-decoder: every configuration trains (gradients reach every parameter)."""

import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from attnviz.devices import pick_device
from attnviz.errors import ConfigError
from attnviz.model.config import ModelConfig
from attnviz.model.encoder import RNNEncoder, reverse_index
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


def test_config_rejects_bad_values_with_a_message():
    with pytest.raises(ConfigError, match="unknown style"):
        ModelConfig(10, 10, style="transformer")
    with pytest.raises(ConfigError, match="input_feeding"):
        ModelConfig(10, 10, style="bahdanau", input_feeding=True)
    with pytest.raises(ConfigError, match="dropout"):
        ModelConfig(10, 10, dropout=1.5)
    with pytest.raises(ConfigError, match="divisible"):
        ModelConfig(10, 10, encoder="transformer", emb_dim=10, heads=4)
    assert ModelConfig.from_dict(ModelConfig(10, 12).to_dict()) == ModelConfig(10, 12)


def test_device_choice():
    assert pick_device("cpu").type == "cpu"
    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match="no CUDA GPU"):
            pick_device("cuda")
        assert pick_device().type in ("cpu", "mps")


def test_server_threads_come_from_the_environment_and_apply_per_thread(monkeypatch):
    import threading

    from attnviz.devices import server_threads, use_server_threads

    monkeypatch.setenv("ATTNVIZ_THREADS", "nonsense")
    assert server_threads() == 1
    monkeypatch.setenv("ATTNVIZ_THREADS", "2")
    seen = []

    def worker() -> None:
        use_server_threads()
        seen.append(torch.get_num_threads())

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == [2]


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
