"""The shared attention step: padding masked, rows summing to one, the local windows (local-m;
local-p and its Gaussian), gradients to every parameter."""

import math

import pytest
import torch

from attnviz.model.scores import SCORES
from tests.support.attention import tiny_attention


@pytest.mark.parametrize("name", sorted(SCORES))
def test_padding_gets_exactly_zero_and_rows_sum_to_one(name):
    att = tiny_attention(name, q_dim=4, k_dim=8)
    torch.manual_seed(1)
    keys = torch.randn(2, 5, 8)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.bool)
    out = att(torch.randn(2, 3, 4), att.prepare(keys, mask), torch.arange(3))
    assert torch.all(out.weights[1, :, 3:] == 0)
    assert torch.all(torch.isneginf(out.scores[1, :, 3:]))
    sums = out.weights.sum(-1)
    if name == "local_p":  # Gaussian-weighted, not renormalised (Luong 2015, eq. 10)
        assert torch.all(sums <= 1 + 1e-6)
    else:
        assert torch.allclose(sums, torch.ones_like(sums), atol=1e-6)
    if name not in ("local_m", "local_p"):
        assert torch.allclose(out.weights, torch.softmax(out.scores, -1))


def test_local_m_window_around_t():
    att = tiny_attention("local_m", window=1)
    keys = torch.randn(1, 8, 2)
    out = att(torch.randn(1, 4, 2), att.prepare(keys, torch.ones(1, 8, dtype=torch.bool)), torch.arange(4))
    assert out.positions[0].tolist() == [0, 1, 2, 3]
    for t in range(4):
        nonzero = (out.weights[0, t] > 0).nonzero().flatten().tolist()
        assert nonzero == [s for s in range(t - 1, t + 2) if 0 <= s < 8]
        inside = out.scores[0, t, nonzero]
        assert torch.allclose(out.weights[0, t, nonzero], torch.softmax(inside, -1))


def test_local_p_window_and_gaussian():
    D = 2
    att = tiny_attention("local_p", window=D)
    keys, mask = torch.randn(1, 10, 2), torch.ones(1, 10, dtype=torch.bool)
    q = torch.randn(1, 1, 2)
    out = att(q, att.prepare(keys, mask), torch.tensor([0]))
    gate = torch.sigmoid(att.score.v_p(torch.tanh(att.score.W_p(q)))).item()
    p_t = 10 * gate
    assert out.positions[0, 0].item() == pytest.approx(p_t, rel=1e-5)
    s = torch.arange(10, dtype=torch.float32)
    window = (s - p_t).abs() <= D
    align = torch.softmax(out.scores[0, 0].masked_fill(~window, -math.inf), -1)
    expected = align * torch.exp(-((s - p_t) ** 2) / (2 * (D / 2) ** 2))
    assert torch.allclose(out.weights[0, 0], expected, atol=1e-6)
    assert torch.all(out.weights[0, 0][~window] == 0)


@pytest.mark.parametrize("name", sorted(SCORES))
def test_gradients_reach_every_attention_parameter(name):
    att = tiny_attention(name, q_dim=4, k_dim=8)
    keys = torch.randn(2, 5, 8, requires_grad=True)
    out = att(torch.randn(2, 3, 4), att.prepare(keys, torch.ones(2, 5, dtype=torch.bool)), torch.arange(3))
    (out.context.sum() + out.weights.pow(2).sum()).backward()
    for pname, p in att.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, pname


def test_an_override_is_masked_clipped_at_zero_and_renormalised():
    att = tiny_attention("general")
    values = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [2.0, 2.0], [9.0, 9.0]]])  # the last is padding
    memory = att.prepare(values, torch.tensor([[True, True, True, False]]))
    override = torch.tensor([[[2.0, 1.0, 1.0, 5.0], [-1.0, 1.0, 3.0, 0.0]]])  # [B, T, S], not distributions
    out = att(torch.randn(1, 2, 2), memory, torch.arange(2), override)
    assert torch.allclose(out.weights[0], torch.tensor([[0.5, 0.25, 0.25, 0.0], [0.0, 0.25, 0.75, 0.0]]))
    assert torch.allclose(out.context[0], torch.tensor([[1.0, 0.75], [1.5, 1.75]]))
    assert torch.isfinite(out.scores[0, :, :3]).all()  # the raw scores are still the model's


def test_local_m_p_t_stops_at_each_rows_last_real_token():
    """Rows of a batch with different source lengths: p_t = min(t, length - 1) for each row."""
    att = tiny_attention("local_m", window=1)
    values = torch.randn(2, 5, 2)
    mask = torch.tensor([[True] * 5, [True, True, True, False, False]])
    out = att(torch.randn(2, 6, 2), att.prepare(values, mask), torch.arange(6))
    assert out.positions.tolist() == [[0, 1, 2, 3, 4, 4], [0, 1, 2, 2, 2, 2]]
    for t in (3, 4, 5):  # the short row: window [1, 2] around its last real token
        assert (out.weights[1, t] > 0).nonzero().flatten().tolist() == [1, 2]
        assert out.weights[1, t].sum().item() == pytest.approx(1.0)
