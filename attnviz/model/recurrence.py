"""The Bahdanau decoder's teacher-forced recurrence as training runs it (one GRU layer, with gradient).

The same maths as stepping the decoder (:meth:`BahdanauDecoder.recur`), in another order:

- The GRU's input ``W_ih [E y_{t-1}; c_t] + b_ih`` is split by columns. The embedding half runs
  once over all target steps. The context half is reordered: ``W_ic c_t = W_ic sum_s a_ts h_s =
  sum_s a_ts (W_ic h_s)``, so ``W_ic`` maps the annotations once per batch (``proj`` ``[B, S, 3H]``)
  and each step only takes the attention-weighted sum of ``proj``.
- The GRU cell runs as one autograd node a step (:class:`_GRUStep`, its backward written out), not a
  dozen. Its backward passes the gradient to the step's attention weights and previous state at
  once and keeps the rest: :class:`_Opening`, whose backward runs after every step's, turns it
  into the gradients of ``proj``, of the embedding half and of ``W_hh``, ``b_hh`` with one
  product each over the whole batch, instead of one small product and one accumulation a step.
- The context vectors ``c_t`` (for the output layer and what the model reports) come from one
  batched product of all the weights with the annotations.

The score, the mask and the softmax are the shared attention step (:meth:`Attention.weigh`), so
every registered score runs here. Only float rounding differs from the stepped recurrence
(``tests/unit/model/test_recurrence.py`` states the tolerance). Inference, evaluation and the app
always step the decoder as the paper writes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from attnviz.model.attention import Attention, AttentionOutput, Memory

if TYPE_CHECKING:
    from torch.autograd.function import FunctionCtx


@dataclass
class _Tape:
    """What the steps leave for :class:`_Opening`'s backward, indexed by step, and the autocast the
    forward ran under (``device_type``, ``dtype``; ``dtype`` None: no autocast), which the backward
    products run under too, as ``torch.amp.custom_bwd`` would."""

    device_type: str = "cpu"
    dtype: torch.dtype | None = None
    weights: list[Tensor] = field(default_factory=list)  # a_t [B, 1, S]
    states: list[Tensor] = field(default_factory=list)  # s_{t-1} [B, H]
    grad_gi: list[Tensor | None] = field(default_factory=list)  # dL/d(GRU input) [B, 3H]
    grad_gh: list[Tensor | None] = field(default_factory=list)  # dL/d(W_hh s_{t-1} + b_hh) [B, 3H]


class _Recurrent(Protocol):
    """What :func:`fast_recurrence` reads of a ``BahdanauDecoder`` (not imported: it imports this module)."""

    @property
    def rnn(self) -> nn.RNNBase: ...  # a one-layer nn.GRU

    @property
    def attention(self) -> Attention: ...


class _Opening(torch.autograd.Function):
    """Identity on the first state; its backward, run after every step's, makes the gradients the
    steps deferred: of ``gi_emb`` ``[B, T, 3H]``, ``proj`` ``[B, S, 3H]``, ``w_hh`` and ``b_hh``."""

    @staticmethod
    def forward(
        ctx: FunctionCtx, h0: Tensor, gi_emb: Tensor, proj: Tensor, w_hh: Tensor, b_hh: Tensor, tape: _Tape
    ) -> Tensor:
        ctx.tape = tape
        return h0.clone()

    @staticmethod
    def backward(ctx: FunctionCtx, grad_h0: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor, None]:
        tape = ctx.tape
        with _autocast(tape):
            return _opening_grads(tape, grad_h0)


def _autocast(tape: _Tape) -> torch.autocast:
    """The autocast the forward ran under (off where it ran in full precision)."""
    return torch.autocast(tape.device_type, dtype=tape.dtype, enabled=tape.dtype is not None)


def _opening_grads(tape: _Tape, grad_h0: Tensor) -> tuple:
    """:class:`_Opening`'s gradients, from what every step left on the tape."""
    dtype = next((g.dtype for g in tape.grad_gi if g is not None), tape.states[0].dtype)
    zero = tape.states[0].new_zeros(tape.states[0].shape[0], 3 * tape.states[0].shape[1], dtype=dtype)  # [B, 3H]
    # a step the loss never reached has no gradient: zero
    grad_gi = torch.stack([zero if g is None else g.to(dtype) for g in tape.grad_gi], dim=1)  # [B, T, 3H]
    grad_gh = torch.stack([zero if g is None else g.to(dtype) for g in tape.grad_gh], dim=1)  # [B, T, 3H]
    weights = torch.cat(tape.weights, dim=1)  # [B, T, S]
    grad_proj = torch.bmm(weights.transpose(1, 2), grad_gi)  # [B, S, T] x [B, T, 3H] -> [B, S, 3H]
    states = torch.stack([h.to(tape.states[0].dtype) for h in tape.states], dim=1)  # [B, T, H]
    flat_gh = grad_gh.flatten(0, 1)  # [B*T, 3H]
    grad_w_hh = flat_gh.t() @ states.flatten(0, 1)  # [3H, B*T] x [B*T, H] -> [3H, H]
    return grad_h0, grad_gi, grad_proj, grad_w_hh, flat_gh.sum(0), None


class _GRUStep(torch.autograd.Function):
    """One GRU step whose input is ``gi_emb_t + a_t proj``: weights ``[B, 1, S]``, state ``[B, H]``
    -> next state ``[B, H]``. Gradients flow to the weights and the state; those of ``gi_emb``,
    ``proj``, ``w_hh`` and ``b_hh`` are left on the tape for :class:`_Opening`."""

    @staticmethod
    def forward(
        ctx: FunctionCtx,
        weights: Tensor,
        h: Tensor,
        gi_emb_t: Tensor,
        proj: Tensor,
        w_hh: Tensor,
        b_hh: Tensor,
        tape: _Tape,
    ) -> Tensor:
        H = h.size(1)
        gi = torch.baddbmm(gi_emb_t.unsqueeze(1), weights, proj).squeeze(1)  # [B, 3H]
        gh = torch.addmm(b_hh, h, w_hh.t())  # [B, 3H]
        rz = torch.sigmoid(gi[:, : 2 * H] + gh[:, : 2 * H])  # [B, 2H]
        r, z = rz[:, :H], rz[:, H:]
        gh_n = gh[:, 2 * H :]  # [B, H]
        n = torch.tanh(torch.addcmul(gi[:, 2 * H :], r, gh_n))  # [B, H]
        ctx.save_for_backward(r, z, n, gh_n, h, proj, w_hh)
        ctx.tape, ctx.t = tape, len(tape.states)
        tape.weights.append(weights.detach())
        tape.states.append(h.detach())
        tape.grad_gi.append(None)
        tape.grad_gh.append(None)
        return torch.lerp(n, h, z)  # (1 - z) n + z h

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Tensor) -> tuple[Tensor, Tensor, None, None, None, None, None]:
        with _autocast(ctx.tape):
            return _GRUStep.grads(ctx, grad)

    @staticmethod
    def grads(ctx: FunctionCtx, grad: Tensor) -> tuple:
        r, z, n, gh_n, h, proj, w_hh = ctx.saved_tensors
        grad_n = grad * (1 - z) * (1 - n * n)  # through tanh: [B, H]
        grad_z = grad * (h - n) * z * (1 - z)  # through sigmoid
        grad_r = grad_n * gh_n * r * (1 - r)
        grad_gi = torch.cat([grad_r, grad_z, grad_n], dim=1)  # [B, 3H]
        grad_gh = torch.cat([grad_r, grad_z, grad_n * r], dim=1)  # [B, 3H]
        grad_h = torch.addmm(grad * z, grad_gh, w_hh)  # [B, 3H] x [3H, H] -> [B, H]
        grad_weights = torch.bmm(grad_gi.unsqueeze(1), proj.transpose(1, 2))  # [B, 1, 3H] x [B, 3H, S]
        ctx.tape.grad_gi[ctx.t], ctx.tape.grad_gh[ctx.t] = grad_gi, grad_gh
        return grad_weights, grad_h, None, None, None, None, None


def fast_recurrence(
    decoder: _Recurrent, emb: Tensor, h0: Tensor, memory: Memory
) -> tuple[Tensor, AttentionOutput, Tensor]:
    """The teacher-forced recurrence of a one-layer GRU ``BahdanauDecoder``: the embedded targets
    ``emb`` ``[B, T, E]``, the first state ``h0`` ``[B, H]`` -> the states s_t ``[B, T, H]``, the
    attention (weights, scores ``[B, T, S]``, context ``[B, T, K]``) and its queries s_{t-1} ``[B, T, H]``."""
    rnn, E = decoder.rnn, emb.size(-1)
    w_ih = rnn.weight_ih_l0  # [3H, E + K]: the embedding's columns, then the context's
    gi_emb = F.linear(emb, w_ih[:, :E], rnn.bias_ih_l0)  # [B, T, 3H]
    proj = F.linear(memory.values, w_ih[:, E:])  # [B, S, K] -> [B, S, 3H], W_ic h_s
    device_type = emb.device.type
    amp = torch.get_autocast_dtype(device_type) if torch.is_autocast_enabled(device_type) else None
    tape = _Tape(device_type, amp)
    h = _Opening.apply(h0, gi_emb, proj, rnn.weight_hh_l0, rnn.bias_hh_l0, tape)  # [B, H]
    constants = gi_emb.detach(), proj.detach(), rnn.weight_hh_l0.detach(), rnn.bias_hh_l0.detach()
    states, queries, weights, scores, positions = [], [], [], [], []
    for t in range(emb.size(1)):
        query = h.unsqueeze(1)  # [B, 1, H] = s_{t-1}
        a, e, p = decoder.attention.weigh(query, memory, torch.full((1,), t, device=emb.device))  # [B, 1, S]
        h = _GRUStep.apply(a, h, constants[0][:, t], *constants[1:], tape)  # [B, H] = s_t
        queries.append(query)
        states.append(h)
        weights.append(a)
        scores.append(e)
        positions.append(p)
    weights_all = torch.cat(weights, dim=1)  # [B, T, S]
    context = torch.bmm(weights_all, memory.values)  # [B, T, S] x [B, S, K] -> [B, T, K]
    where = None if positions[0] is None else torch.cat(positions, dim=1)  # [B, T]
    attention = AttentionOutput(context, weights_all, torch.cat(scores, dim=1), where)
    return torch.stack(states, dim=1), attention, torch.cat(queries, dim=1)
