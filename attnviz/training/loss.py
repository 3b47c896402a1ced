"""Label-smoothed cross-entropy with its gradient computed in the forward pass.

The same loss as ``nn.CrossEntropyLoss(ignore_index=..., label_smoothing=eps)`` (mean over the
non-ignored rows of ``-sum_v q_v log p_v`` with ``q = (1 - eps) one_hot(y) + eps / V``), and the
same gradient, ``(softmax(z) - q) / n`` per kept row. Written out, the loss and its gradient
need one softmax over ``[N, V]`` and a few passes over it, where the generic path makes a
log-softmax, its backward, zero-filled scatter buffers and a separate argmax for accuracy: on
the CPU, with vocabularies of thousands of words, that is a tenth of a training step.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.nn import functional as F


class _SmoothedCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits: Tensor, gold: Tensor, smoothing: float, ignore_index: int) -> tuple[Tensor, Tensor]:
        V = logits.size(1)  # logits [N, V], gold [N]
        keep = gold != ignore_index  # [N]
        index = gold.clamp_min(0).unsqueeze(1)  # [N, 1] a valid column even on ignored rows
        count = keep.sum().clamp_min(1)
        top, argmax = logits.max(dim=-1)  # [N] each
        probs = logits - top.unsqueeze(1)  # [N, V] z - max(z)
        mean_shifted = probs.mean(dim=-1)  # [N] for the uniform part of q
        gold_shifted = probs.gather(1, index).squeeze(1)  # [N]
        probs.exp_()
        total = probs.sum(dim=-1)  # [N]
        log_z = total.log()  # [N] log-sum-exp of the shifted logits
        per_row = (1.0 - smoothing) * (log_z - gold_shifted) + smoothing * (log_z - mean_shifted)  # [N]
        loss = (per_row * keep).sum() / count
        # gradient of the mean loss: (softmax - q) / count on kept rows, 0 on ignored rows
        row_scale = keep.to(probs.dtype) / count  # [N]
        probs.mul_((row_scale / total).unsqueeze(1)).sub_((row_scale * (smoothing / V)).unsqueeze(1))
        probs.scatter_add_(1, index, (-(1.0 - smoothing) * row_scale).unsqueeze(1))
        ctx.save_for_backward(probs)
        ctx.mark_non_differentiable(argmax)
        return loss, argmax

    @staticmethod
    def backward(ctx, grad_loss: Tensor, _grad_argmax: Tensor | None):
        (grad,) = ctx.saved_tensors
        return grad * grad_loss, None, None, None


def smoothed_cross_entropy(
    logits: Tensor, gold: Tensor, smoothing: float = 0.0, ignore_index: int = -100
) -> tuple[Tensor, Tensor]:
    """Mean label-smoothed cross-entropy of ``logits`` ``[N, V]`` against ``gold`` ``[N]``, and the
    argmax prediction of every row ``[N]`` (for accuracy, at no extra cost)."""
    if logits.dim() != 2 or gold.shape != logits.shape[:1]:
        raise ValueError(f"logits must be [N, V] and gold [N]; got {list(logits.shape)} and {list(gold.shape)}")
    if not 0.0 <= smoothing < 1.0:
        raise ValueError(f"smoothing must be in [0, 1), got {smoothing}")
    if not (torch.is_grad_enabled() and logits.requires_grad):  # no gradient to prepare
        loss = F.cross_entropy(logits, gold, ignore_index=ignore_index, label_smoothing=smoothing)
        return loss, logits.argmax(dim=-1)
    return _SmoothedCrossEntropy.apply(logits, gold, smoothing, ignore_index)
