"""Dropout whose mask comes from a fast counter-free generator.

On the CPU, ``nn.Dropout`` draws its mask with torch's Mersenne Twister one element at a time,
which costs far more than the multiplication it feeds on the large output features of a Multi30k
batch. This module draws the same kind of mask from numpy's
PCG64 (64 random bits per two elements), seeded from torch's generator, so ``torch.manual_seed``
still makes training reproducible. Each element is dropped with probability
``round(p * 2**32) / 2**32`` (within 2.4e-10 of ``p``) and the kept ones are scaled by the
exact inverse of the keep probability, so the expectation is unchanged. Off the CPU, and in
eval mode, it is ``nn.functional.dropout``.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor, nn

_SCALE = 2**32


def dropout_mask(shape: torch.Size, p: float, dtype: torch.dtype) -> Tensor:
    """Keep mask scaled by 1/keep-probability: 0 where dropped, ``1/(1-p)`` elsewhere."""
    threshold = round(p * _SCALE)  # drop where the 32-bit draw is below this
    n = int(np.prod(shape))
    seed = int(torch.randint(0, 2**63 - 1, (1,)))
    bits = np.random.Generator(np.random.PCG64(seed)).bit_generator.random_raw((n + 1) // 2)
    keep = bits.view(np.uint32)[:n] >= threshold
    mask = torch.from_numpy(keep).view(shape).to(dtype)
    return mask.mul_(_SCALE / (_SCALE - threshold))


class Dropout(nn.Module):
    """Drop-in ``nn.Dropout`` (no parameters) with the fast CPU mask above."""

    def __init__(self, p: float = 0.5):
        super().__init__()
        if not 0 <= p < 1:
            raise ValueError(f"dropout probability must be in [0, 1), got {p}")
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        if not self.training or self.p == 0 or x.numel() == 0:
            return x
        if x.device.type != "cpu":
            return nn.functional.dropout(x, self.p, True)
        return x * dropout_mask(x.shape, self.p, x.dtype)

    def extra_repr(self) -> str:
        return f"p={self.p}"
