"""CUDA graphs of the Bahdanau recurrence: the bucket padding changes nothing training reads (on any
device, without capturing), where graphs apply, and, on a GPU, the captured graphs against eager."""

from __future__ import annotations

import copy

import pytest
import torch

from attnviz.devices import DeviceWarning
from attnviz.model import SCORES, ModelConfig, build_model
from attnviz.training.config import TrainConfig
from attnviz.training.fit import fit
from attnviz.training.graphs import BUCKET, drop_graphs, graphs_apply, use_graphs
from tests.support.tiny import reverse_corpus, tiny_translator

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def _batch(device: str = "cpu") -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(1)
    src = torch.randint(4, 30, (3, 11), generator=g)  # S = 11: padded to 16
    lengths = torch.tensor([11, 7, 3])
    src[1, 7:], src[2, 3:] = 0, 0
    tgt = torch.randint(4, 40, (3, 13), generator=g)  # T = 13: padded to 16
    tgt[2, 9:] = 0
    return src.to(device), lengths.to(device), tgt.to(device)


def _run(model, batch):
    """Logits, attention, local positions and the gradient of every parameter for one batch."""
    out = model(*batch)
    src_len = out.attention.weights.size(-1)
    loss = out.logits.square().mean() + (out.attention.weights * torch.arange(src_len, device=batch[0].device)).sum()
    params = list(model.parameters())
    grads = torch.autograd.grad(loss, params, allow_unused=True)
    return out, [torch.zeros_like(p) if g is None else g for p, g in zip(params, grads, strict=True)]


def _close(a, b, atol: float) -> None:
    (out_a, grads_a), (out_b, grads_b) = a, b
    assert out_a.logits.shape == out_b.logits.shape
    assert out_a.attention.weights.shape == out_b.attention.weights.shape
    torch.testing.assert_close(out_a.logits, out_b.logits, atol=atol, rtol=1e-4)
    torch.testing.assert_close(out_a.attention.weights, out_b.attention.weights, atol=atol, rtol=1e-4)
    torch.testing.assert_close(out_a.attention.context, out_b.attention.context, atol=atol, rtol=1e-4)
    torch.testing.assert_close(out_a.queries, out_b.queries, atol=atol, rtol=1e-4)
    assert (out_a.attention.positions is None) == (out_b.attention.positions is None)
    if out_a.attention.positions is not None:
        torch.testing.assert_close(out_a.attention.positions, out_b.attention.positions, atol=atol, rtol=1e-4)
    for ga, gb in zip(grads_a, grads_b, strict=True):
        torch.testing.assert_close(ga, gb, atol=atol * 10, rtol=1e-3)


def _model(score: str, device: str = "cpu"):
    cfg = ModelConfig(30, 40, emb_dim=8, hidden_dim=12, attn_dim=10, score=score, style="bahdanau", dropout=0.0)
    return build_model(cfg, seed=0).to(device).train()


@pytest.mark.parametrize("score", sorted(SCORES))
def test_padding_to_the_bucket_changes_no_output_and_no_gradient(score):
    model, batch = _model(score), _batch()
    eager = _run(model, batch)
    graphs = use_graphs(model, capture=False)
    padded = _run(model, batch)
    _close(eager, padded, atol=1e-5)
    assert padded[0].attention.weights.shape == (3, 13, 11)  # cut back from the 16 x 16 bucket
    assert graphs.eager == 0 and not graphs.graphs  # padded, nothing captured
    drop_graphs(model)
    assert model.decoder.recurrence is None


def test_the_recurrence_without_gradient_or_in_eval_mode_runs_eagerly():
    model = _model("additive")
    graphs = use_graphs(model, capture=False)
    with torch.no_grad():
        model(*_batch())
    model.eval()
    model(*_batch())
    assert graphs.eager == 2


def test_a_copy_of_the_model_runs_eagerly_and_leaves_the_original_its_graphs():
    model = _model("additive")
    graphs = use_graphs(model)
    twin = copy.deepcopy(model)
    assert twin.decoder.recurrence is None and model.decoder.recurrence is graphs


def test_a_failed_capture_trains_on_eagerly_and_says_so_once(monkeypatch):
    def refuse(*args, **kwargs):
        raise RuntimeError("CUDA error: operation not permitted when stream is capturing")

    monkeypatch.setattr(torch.cuda, "make_graphed_callables", refuse)
    model, batch = _model("additive"), _batch()
    eager = _run(model, batch)
    graphs = use_graphs(model)  # capturing, here on the CPU: the capture fails
    with pytest.warns(DeviceWarning, match="CUDA graphs could not be captured .* stream is capturing"):
        first = _run(model, batch)
    second = _run(model, batch)  # no second try, no second warning
    _close(eager, first, atol=1e-6)
    _close(eager, second, atol=1e-6)
    assert graphs.failed and graphs.eager == 2 and not graphs.graphs


def test_where_graphs_apply():
    gpu, cpu = torch.device("cuda"), torch.device("cpu")
    assert graphs_apply(_model("additive"), gpu, "fp32", 1.0, 1) == ""
    assert graphs_apply(_model("additive"), cpu, "fp32", 1.0, 1) == "the device is not a CUDA GPU"
    luong = build_model(ModelConfig(30, 40, emb_dim=8, hidden_dim=12, style="luong"))
    assert "not Bahdanau's" in graphs_apply(luong, gpu, "fp32", 1.0, 1)
    lstm = build_model(ModelConfig(30, 40, emb_dim=8, hidden_dim=12, cell="lstm"))
    assert "one GRU layer" in graphs_apply(lstm, gpu, "fp32", 1.0, 1)
    reasons = graphs_apply(_model("additive"), gpu, "bf16", 0.5, 2)
    assert reasons == "bf16 autocast, scheduled sampling, several processes"


def test_a_cpu_training_keeps_the_eager_recurrence_and_its_config_records_the_choice():
    corpus = reverse_corpus()
    tr = tiny_translator(corpus)
    fit(tr, corpus, TrainConfig(epochs=1, batch_size=8, record_history=False))
    assert tr.model.decoder.recurrence is None
    assert tr.meta["recipe"]["cuda_graphs"] is True
    assert BUCKET == 8


@cuda
@pytest.mark.parametrize("score", ["additive", "local_p", "location"])
def test_captured_graphs_give_the_eager_outputs_and_gradients(score):
    model, batch = _model(score, "cuda"), _batch("cuda")
    graphs = use_graphs(model)
    # the capture, then a replay on the same bucket. Captured first: on an H100 (torch 2.11) a process's
    # first capture failed when an eager gru_cell backward had run before it (training captures first)
    captured, replayed = _run(model, batch), _run(model, batch)
    assert not graphs.failed and len(graphs.graphs) == 1 and graphs.replays == 2
    # eagerly through the kernels the graphs hold (gru_cell; cuDNN's GRU multiplies in TF32 by default)
    model.decoder.recurrence = lambda emb, state, memory: model.decoder.recur(emb, state, memory, fused=True)
    eager = _run(model, batch)
    _close(eager, captured, atol=1e-4)
    _close(eager, replayed, atol=1e-4)


@cuda
def test_a_gpu_training_replays_graphs_and_learns_as_eager():
    corpus = reverse_corpus()
    losses = {}
    for graphs in (True, False):
        tr = tiny_translator(corpus, emb_dim=32, hidden_dim=48, attn_dim=32)
        cfg = TrainConfig(epochs=3, batch_size=8, device="cuda", cuda_graphs=graphs, record_history=False)
        result = fit(tr, corpus, cfg)
        losses[graphs] = result.best_valid_loss
        assert tr.model.decoder.recurrence is None
        assert tr.meta["hardware"].endswith(", CUDA graphs") == graphs  # the checkpoint says how it trained
    assert losses[True] == pytest.approx(losses[False], rel=1e-3)
