"""The fast CPU dropout: Bernoulli masks at the asked rate, unbiased, reproducible, exact gradient."""

from __future__ import annotations

import pytest
import torch

from attnviz.model.dropout import Dropout, dropout_mask


def test_mask_drops_at_the_asked_rate_and_keeps_the_mean():
    torch.manual_seed(0)
    mask = dropout_mask(torch.Size([200, 50, 100]), 0.3, torch.float32)  # 1M draws
    dropped = (mask == 0).float().mean().item()
    assert abs(dropped - 0.3) < 0.002
    assert mask.unique().tolist() == [0.0, pytest.approx(1 / 0.7)]
    assert abs(mask.mean().item() - 1.0) < 0.005


def test_masks_are_independent_and_reproducible():
    torch.manual_seed(1)
    a, b = (dropout_mask(torch.Size([1000, 100]), 0.5, torch.float32) == 0 for _ in range(2))
    assert abs((a & b).float().mean().item() - 0.25) < 0.01  # independent draws
    torch.manual_seed(1)
    assert torch.equal(dropout_mask(torch.Size([1000, 100]), 0.5, torch.float32) == 0, a)


def test_module_gradient_is_the_mask_and_eval_is_identity():
    layer = Dropout(0.4)
    x = torch.randn(64, 33, requires_grad=True)
    torch.manual_seed(2)
    y = layer(x)
    y.sum().backward()
    kept = y != 0
    assert torch.allclose(y[kept], x[kept] / 0.6) and torch.allclose(x.grad, kept.float() / 0.6)
    layer.eval()
    assert layer(x) is x
    assert Dropout(0.0)(x) is x
    with pytest.raises(ValueError, match="dropout probability"):
        Dropout(1.0)
