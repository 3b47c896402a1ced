"""Label-smoothed cross-entropy with its gradient computed in the forward pass.

The same loss as ``nn.CrossEntropyLoss(ignore_index=..., label_smoothing=eps)`` (mean over the
non-ignored rows of ``-sum_v q_v log p_v`` with ``q = (1 - eps) one_hot(y) + eps / V``), and the
same gradient, ``(softmax(z) - q) / n`` per kept row. Written out, the loss and its gradient
need one softmax over ``[N, V]`` and a few passes over it, made block by block of rows (bf16
logits are read as float32 a block at a time, and their gradient is kept in bf16), where the generic path makes a
log-softmax, its backward, zero-filled scatter buffers and a separate argmax for accuracy: on
the CPU, with vocabularies of thousands of words, that is a tenth of a training step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import Tensor
from torch.nn import functional as F

if TYPE_CHECKING:
    from torch.autograd.function import FunctionCtx

_BLOCK = 1 << 20  # elements of [N, V] per block of rows


class _SmoothedCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: FunctionCtx, logits: Tensor, gold: Tensor, smoothing: float, ignore_index: int
    ) -> tuple[Tensor, Tensor]:
        N, V = logits.shape  # logits [N, V] (bf16, float32 or float64), gold [N]
        dtype = torch.promote_types(logits.dtype, torch.float32)  # bf16 logits: the loss in float32
        keep = gold != ignore_index  # [N]
        index = gold.clamp_min(0).unsqueeze(1)  # [N, 1] a valid column even on ignored rows
        count = keep.sum().clamp_min(1)
        row_scale = keep.to(dtype) / count  # [N] the mean over kept rows; 0 on ignored rows
        # dL/dz in the logits' own dtype (autograd hands it back in that dtype anyway): half the
        # memory for bf16 logits, and no [N, V] float32 copy of them
        grad = torch.empty_like(logits)  # [N, V]
        per_row = torch.empty(N, dtype=dtype, device=logits.device)  # [N]
        argmax = torch.empty(N, dtype=torch.long, device=logits.device)  # [N]
        rows = max(1, _BLOCK // V)
        for a in range(0, N, rows):  # a block of rows at a time: small buffers the allocator reuses
            z, i, scale = logits[a : a + rows].to(dtype), index[a : a + rows], row_scale[a : a + rows]  # z [n, V]
            top, argmax[a : a + rows] = z.max(dim=-1)  # [n] each
            probs = torch.softmax(z, dim=-1)  # [n, V]
            # log-sum-exp from the softmax at the row's maximum, p_max = exp(top - log Z) >= 1 / V
            log_z = top - probs.gather(1, argmax[a : a + rows].unsqueeze(1)).squeeze(1).log()  # [n]
            gold_z, mean_z = z.gather(1, i).squeeze(1), z.mean(dim=-1)  # [n] each; mean: q's uniform part
            per_row[a : a + rows] = (1.0 - smoothing) * (log_z - gold_z) + smoothing * (log_z - mean_z)
            # gradient of the mean loss: (softmax - q) / count on kept rows, 0 on ignored rows
            probs.mul_(scale.unsqueeze(1)).sub_((scale * (smoothing / V)).unsqueeze(1))
            probs.scatter_add_(1, i, (-(1.0 - smoothing) * scale).unsqueeze(1))
            grad[a : a + rows] = probs
        loss = (per_row * keep).sum() / count
        ctx.save_for_backward(grad)
        ctx.mark_non_differentiable(argmax)
        return loss, argmax

    @staticmethod
    def backward(ctx: FunctionCtx, grad_loss: Tensor, _grad_argmax: Tensor | None) -> tuple[Tensor, None, None, None]:
        (grad,) = ctx.saved_tensors
        return grad * grad_loss.to(grad.dtype), None, None, None


def smoothed_cross_entropy(
    logits: Tensor, gold: Tensor, smoothing: float = 0.0, ignore_index: int = -100
) -> tuple[Tensor, Tensor]:
    """Mean label-smoothed cross-entropy of ``logits`` ``[N, V]`` against ``gold`` ``[N]``, and the
    argmax prediction of every row ``[N]`` (for accuracy, at no extra cost). bf16 logits are read
    as float32: the loss and its gradient are computed in float32 (float64 logits stay float64)."""
    if logits.dim() != 2 or gold.shape != logits.shape[:1]:
        raise ValueError(f"logits must be [N, V] and gold [N]; got {list(logits.shape)} and {list(gold.shape)}")
    if not 0.0 <= smoothing < 1.0:
        raise ValueError(f"smoothing must be in [0, 1), got {smoothing}")
    if not (torch.is_grad_enabled() and logits.requires_grad):  # no gradient to prepare
        loss = F.cross_entropy(logits.float(), gold, ignore_index=ignore_index, label_smoothing=smoothing)
        return loss, logits.argmax(dim=-1)
    return _SmoothedCrossEntropy.apply(logits, gold, smoothing, ignore_index)
