"""The shared attention step: masking, the softmax, local windows and the context vector.

:class:`Attention` wraps any registered score (:mod:`attnviz.model.scores`) and does the work
every score shares, returning the weights (never keeping them on the module, so one model serves
many threads). Notation as in :mod:`attnviz.model.scores`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attnviz.errors import ConfigError
from attnviz.model.local_scores import LocalScore
from attnviz.model.scores import SCORES, Term, get_score


def is_local(score: str) -> bool:
    """Whether the score ``score`` is local (a window around ``p_t`` with a content score inside)."""
    return issubclass(get_score(score), LocalScore)


def is_predictive(score: str) -> bool:
    """Whether the score ``score`` predicts its window's centre and multiplies the weights by a Gaussian
    around it after the softmax (local-p), so that a row of weights sums to less than 1. False for a
    name outside the registry (a Transformer's heads)."""
    cls = SCORES.get(score)
    return bool(cls is not None and cls.predictive)


@dataclass
class Memory:
    """The encoder side, prepared once per source batch."""

    values: Tensor  # [B, S, K] annotations averaged into the context
    cache: Tensor  # [B, S, *] the score's per-source projection of the keys
    mask: Tensor  # [B, S] True at real tokens
    lengths: Tensor  # [B] source lengths

    def expand(self, index: Tensor) -> Memory:
        """Select/repeat batch rows (beam search): ``index`` ``[B']``."""
        return Memory(self.values[index], self.cache[index], self.mask[index], self.lengths[index])


@dataclass
class AttentionOutput:
    """One or more decoder steps of attention. ``T`` is 1 for a single step."""

    context: Tensor  # [B, T, K]
    weights: Tensor  # [B, T, S]; exactly 0 at padding and outside a local window
    scores: Tensor  # [B, T, S] raw energies; -inf at padding and outside a local window
    positions: Tensor | None  # [B, T] p_t of local attention, else None


class Attention(nn.Module):
    """Score + mask + softmax (+ local window) + context, for any registered score."""

    def __init__(
        self,
        score: str,
        query_dim: int,
        key_dim: int,
        attn_dim: int,
        max_src_len: int = 100,
        window: int = 5,
        local_content: str = "general",
    ):
        super().__init__()
        score_cls = get_score(score)
        if window < 1:
            raise ConfigError(f"the local window half-width D must be at least 1, got {window}")
        self.name, self.window = score, window
        local = issubclass(score_cls, LocalScore)
        needs_equal = (get_score(local_content) if local else score_cls).needs_equal_dims
        # dot-style scores need keys of the query's size: sum the two directions of a
        # bidirectional encoder (parameter-free, so dot never becomes general)
        self.sum_directions = needs_equal and key_dim == 2 * query_dim
        if needs_equal and key_dim not in (query_dim, 2 * query_dim):
            raise ConfigError(
                f"{score if not local else local_content} attention compares decoder states (size {query_dim}) with "
                f"encoder annotations (size {key_dim}) by a dot product; make them equal (or the annotations twice "
                "the size, from a bidirectional encoder), e.g. emb_dim = hidden_dim for a Transformer encoder"
            )
        score_key_dim = query_dim if self.sum_directions else key_dim
        extra = {"content": local_content} if local else {}
        self.score = score_cls(query_dim, score_key_dim, attn_dim, max_src_len, **extra)

    @property
    def is_local(self) -> bool:
        return isinstance(self.score, LocalScore)

    @property
    def is_predictive(self) -> bool:
        """Local-p: the window's centre is predicted and a Gaussian scales the weights."""
        return self.score.predictive

    def cell_terms(self, query: Tensor, values: Tensor, t: int, s: int, q: str) -> list[Term]:
        """Every intermediate of the raw score of cell ``(t, s)``: query ``[Q]``, one sentence's
        annotations ``values`` ``[S, K]`` (no padding). Starts with the key as the score reads it
        (none for a score that reads no key); ends with the score (local: the content score,
        before the window masks it)."""
        keys, key = values, rf"\bar h_{{{s}}}"
        terms = []
        if self.sum_directions:
            forward, backward = values.chunk(2, dim=-1)  # [S, K/2] each
            keys = forward + backward  # [S, Q], as in prepare
            arrows = rf"\overrightarrow{{h}}_{{{s}}}", rf"\overleftarrow{{h}}_{{{s}}}"
            terms.append(Term("annotation", rf"h_{{{s}}} = [{arrows[0]}; {arrows[1]}]", values[s]))
            terms.append(Term("key (directions summed)", rf"{key} = {arrows[0]} + {arrows[1]}", keys[s]))
        elif self.score.content_based:  # the score reads the annotation itself
            terms.append(Term("annotation", rf"{key} = h_{{{s}}}", values[s]))
        return terms + self.score.terms(query, keys, t, s, q, key)

    def prepare(self, values: Tensor, mask: Tensor) -> Memory:
        """values ``[B, S, K]``, mask ``[B, S]`` -> :class:`Memory` (keys projected once)."""
        keys = values
        if self.sum_directions:
            forward, backward = values.chunk(2, dim=-1)  # [B, S, K/2] each
            keys = forward + backward  # [B, S, Q]
        return Memory(values, self.score.prepare(keys), mask, mask.sum(dim=1))

    def forward(
        self, queries: Tensor, memory: Memory, steps: Tensor, override: Tensor | None = None
    ) -> AttentionOutput:
        """queries ``[B, T, Q]``; ``steps`` ``[T]`` the decoder step index of each query.

        ``override`` ``[B, T, S]`` replaces the computed weights (what-if analysis): it is
        masked to real tokens and renormalised; the raw scores are still reported.
        """
        weights, scores, positions = self.weigh(queries, memory, steps, override)
        context = torch.bmm(weights, memory.values)  # [B, T, S] x [B, S, K] -> [B, T, K]
        return AttentionOutput(context, weights, scores, positions)

    def weigh(
        self, queries: Tensor, memory: Memory, steps: Tensor, override: Tensor | None = None
    ) -> tuple[Tensor, Tensor, Tensor | None]:
        """:meth:`forward` without the context: the weights and raw scores ``[B, T, S]`` and the
        positions ``[B, T]`` of local attention (else None)."""
        scores = self.score.energies(queries, memory.cache)  # [B, T, S]
        valid = memory.mask.unsqueeze(1).expand_as(scores)  # [B, T, S]
        positions = None
        if self.is_local:
            positions = self._positions(queries, memory, steps)  # [B, T]
            src_pos = torch.arange(scores.size(-1), device=scores.device, dtype=positions.dtype)
            distance = src_pos.view(1, 1, -1) - positions.unsqueeze(-1)  # [B, T, S]
            in_window = distance.abs() <= self.window
            # a p_t between positions may leave the window empty of real tokens: keep the nearest
            nearest = distance.abs() == distance.abs().masked_fill(~valid, math.inf).amin(-1, keepdim=True)  # [B, T, S]
            valid = valid & (in_window | nearest)
        scores = scores.masked_fill(~valid, -math.inf)  # [B, T, S]: -inf off the source and the window
        weights = torch.softmax(scores, dim=-1)  # [B, T, S]
        if self.is_predictive:
            sigma = self.window / 2
            weights = weights * torch.exp(-(distance**2) / (2 * sigma**2))
        weights = weights.masked_fill(~valid, 0.0)  # [B, T, S]: exactly 0 off the source even where a row overflowed
        if override is not None:
            forced = override.to(weights.dtype).clamp(min=0) * memory.mask.unsqueeze(1)  # [B, T, S]
            weights = forced / forced.sum(-1, keepdim=True).clamp(min=1e-12)
        return weights, scores, positions

    def _positions(self, queries: Tensor, memory: Memory, steps: Tensor) -> Tensor:
        if self.is_predictive:
            return self.score.predict_position(queries, memory.lengths)  # [B, T]
        last = (memory.lengths - 1).unsqueeze(1).to(queries.dtype)  # [B, 1]
        return torch.minimum(steps.to(queries.dtype).unsqueeze(0), last)  # [B, T]
