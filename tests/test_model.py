"""The whole encoder-decoder: every configuration trains (gradients reach every parameter)."""

import pytest
import torch

from attnviz.attention import SCORES
from attnviz.config import ModelConfig, pick_device
from attnviz.errors import ConfigError
from attnviz.model import build_model

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

    from attnviz.config import server_threads, use_server_threads

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
