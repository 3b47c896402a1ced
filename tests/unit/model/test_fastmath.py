"""The tanh scores' tanh: 2 sigmoid(2x) - 1 in float32 is torch's tanh to float rounding, values and gradient."""

import torch

from attnviz.model.fastmath import tanh_


def _inputs() -> torch.Tensor:
    wide = torch.linspace(-30, 30, 20001)
    small = torch.logspace(-8, 0, 2001)
    return torch.cat([wide, small, -small, torch.tensor([0.0, float("inf"), float("-inf")])])


def test_float32_values_are_tanh_to_two_ulps_of_one():
    x = _inputs()
    got = tanh_(x.clone())
    assert torch.equal(got[-2:], torch.tensor([1.0, -1.0]))  # saturates like tanh
    assert float((got.double() - torch.tanh(x.double())).abs().max()) < 2.5e-7
    assert float(got.abs().max()) <= 1.0


def test_in_place_without_a_gradient():
    x = torch.randn(4, 3, 5)
    before = torch.tanh(x)
    y = tanh_(x)
    assert y.data_ptr() == x.data_ptr()
    torch.testing.assert_close(y, before, atol=3e-7, rtol=0)


def test_the_gradient_is_tanh_s_own():
    x = (torch.randn(6, 7, 8) * 3).requires_grad_()
    weights = torch.randn(6, 7, 8)
    (tanh_(x * 1) * weights).sum().backward()  # x * 1: a fresh temporary, as the scores pass
    ours = x.grad.clone()
    x.grad = None
    (torch.tanh(x) * weights).sum().backward()
    torch.testing.assert_close(ours, x.grad, atol=2e-6, rtol=0)


def test_other_dtypes_and_devices_use_torch_s_tanh_exactly():
    for dtype in (torch.bfloat16, torch.float64):
        x = torch.randn(50).to(dtype)
        assert torch.equal(tanh_(x.clone()), torch.tanh(x))
    if torch.cuda.is_available():  # GPUs keep torch's own tanh
        x = torch.randn(50, device="cuda")
        assert torch.equal(tanh_(x.clone()), torch.tanh(x))
