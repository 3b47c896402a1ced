"""The fused label-smoothed cross-entropy equals PyTorch's, value and gradient."""

import pytest
import torch
from torch import nn

from attnviz.training import loss as loss_module
from attnviz.training.loss import smoothed_cross_entropy


@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.3])
def test_loss_gradient_and_argmax_equal_pytorch(smoothing):
    g = torch.Generator().manual_seed(0)
    logits = (3 * torch.randn(40, 23, generator=g, dtype=torch.float64)).requires_grad_()
    gold = torch.randint(0, 23, (40,), generator=g)
    gold[::5] = 0  # padding rows are ignored
    expected = nn.CrossEntropyLoss(ignore_index=0, label_smoothing=smoothing)(logits, gold)
    (expected_grad,) = torch.autograd.grad(expected, logits)
    loss, predicted = smoothed_cross_entropy(logits, gold, smoothing, ignore_index=0)
    (grad,) = torch.autograd.grad(2.0 * loss, logits)
    assert loss.item() == pytest.approx(expected.item(), rel=1e-12)
    assert torch.allclose(grad, 2.0 * expected_grad, atol=1e-12)
    assert torch.equal(predicted, logits.argmax(-1))
    assert not grad[::5].any()  # ignored rows get no gradient


def test_without_gradient_it_is_the_plain_loss():
    logits, gold = torch.tensor([[2.0, 0.0, -1.0], [0.0, 1.0, 0.0]]), torch.tensor([0, 1])
    loss, predicted = smoothed_cross_entropy(logits, gold)
    assert loss.item() == pytest.approx(nn.functional.cross_entropy(logits, gold).item())
    assert predicted.tolist() == [0, 1]


def test_all_rows_ignored_gives_zero_loss_and_gradient():
    logits = torch.randn(3, 5, requires_grad=True)
    loss, _ = smoothed_cross_entropy(logits, torch.zeros(3, dtype=torch.long), 0.1, ignore_index=0)
    loss.backward()
    assert loss.item() == 0.0
    assert not logits.grad.any()


def test_bad_shapes_and_smoothing_are_refused():
    with pytest.raises(ValueError, match="logits must be"):
        smoothed_cross_entropy(torch.zeros(2, 3, 4), torch.zeros(2, dtype=torch.long))
    with pytest.raises(ValueError, match="smoothing"):
        smoothed_cross_entropy(torch.zeros(2, 3), torch.zeros(2, dtype=torch.long), smoothing=1.0)


@pytest.mark.parametrize("rows", [1, 7, 100])
def test_blocks_of_rows_give_the_whole_batch_loss_and_gradient(rows, monkeypatch):
    """The loss runs a block of rows at a time; any block size gives PyTorch's loss and gradient."""
    monkeypatch.setattr(loss_module, "_BLOCK", rows * 23)
    test_loss_gradient_and_argmax_equal_pytorch(0.1)


def test_bf16_logits_give_the_float32_loss_of_their_values_and_a_bf16_gradient():
    g = torch.Generator().manual_seed(1)
    logits = (3 * torch.randn(30, 50, generator=g)).bfloat16().requires_grad_()
    gold = torch.randint(1, 50, (30,), generator=g)
    wide = logits.detach().float().requires_grad_()  # the same values in float32
    expected = nn.CrossEntropyLoss(label_smoothing=0.1)(wide, gold)
    (expected_grad,) = torch.autograd.grad(expected, wide)
    loss, predicted = smoothed_cross_entropy(logits, gold, 0.1)
    (grad,) = torch.autograd.grad(loss, logits)
    assert loss.dtype == torch.float32
    assert loss.item() == pytest.approx(expected.item(), rel=1e-6)
    assert grad.dtype == torch.bfloat16
    torch.testing.assert_close(grad.float(), expected_grad, atol=expected_grad.abs().max().item() / 100, rtol=0)
    assert torch.equal(predicted, wide.argmax(-1))
