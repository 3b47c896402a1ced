"""The attention score functions, one registry of them (``SCORES``: name -> class).

A score function only computes energies ``e[t, s]`` between decoder queries and encoder keys;
the shared step (:mod:`attnviz.model.attention`) does what every score shares. Registering a
class with :func:`register` (here, or in :mod:`attnviz.model.local_scores` for a windowed one) is
the only change needed to offer a new score everywhere.

Notation: ``B`` batch, ``T`` decoder steps, ``S`` source positions, ``Q`` query size (the
decoder state), ``K`` key size (the encoder annotation), ``A`` the attention layer size.

Each score also writes out its own arithmetic for one cell (``Score.terms``: the named
intermediates of its formula), which :mod:`attnviz.explain.cellmath` turns into the app's math panel.
"""

from __future__ import annotations

import math
from typing import ClassVar, NamedTuple

import torch
from torch import Tensor, nn

from attnviz.errors import ConfigError, InputError
from attnviz.model.fastmath import tanh_

SCORES: dict[str, type[Score]] = {}


class Term(NamedTuple):
    """One intermediate of a score's formula at one cell: a stable name, its LaTeX, its value."""

    label: str  # e.g. "U_a key"
    latex: str  # the expression, e.g. r"U_a \bar h_{2}"
    value: Tensor  # [] or [n]


def register(cls: type[Score]) -> type[Score]:
    """Class decorator: add a score function to ``SCORES`` under ``cls.name``."""
    SCORES[cls.name] = cls
    return cls


class Score(nn.Module):
    """Base class. ``energies`` returns raw scores ``[B, T, S]`` for queries ``[B, T, Q]``.

    ``prepare`` runs once per source sentence and may cache a projection of the keys, so a
    decoder step only pays for the query side.
    """

    name: ClassVar[str]
    formula: ClassVar[str]  # LaTeX, shown by the app
    needs_equal_dims: ClassVar[bool] = False  # keys must have the query's size
    content_based: ClassVar[bool] = True  # False: ignores the keys (location)
    predictive: ClassVar[bool] = False  # True: a predicted window centre and a Gaussian after the softmax (local-p)
    symbols: ClassVar[dict[str, str]] = {}  # formula name (W_a, v_a...) -> the nn.Linear holding it

    def __init__(self, query_dim: int, key_dim: int, attn_dim: int, max_src_len: int):
        super().__init__()
        self.query_dim, self.key_dim, self.attn_dim = query_dim, key_dim, attn_dim

    def prepare(self, keys: Tensor) -> Tensor:
        """Per-source cache computed once: by default the keys themselves. ``[B, S, *]``"""
        return keys

    def energies(self, queries: Tensor, cache: Tensor) -> Tensor:
        raise NotImplementedError

    def terms(self, query: Tensor, keys: Tensor, t: int, s: int, q: str, k: str) -> list[Term]:
        """The arithmetic of ``e[t, s]``, step by step: query ``[Q]``, one sentence's keys ``[S, K]``
        (no padding), ``q``/``k`` the LaTeX of the query and of key ``s``. The last term is the
        score itself, equal to ``energies`` at that cell."""
        raise NotImplementedError

    def formula_parameters(self) -> dict[str, Tensor]:
        """The learned parameters under their names in the formula: matrices ``[out, in]``, the
        ``v_*`` as vectors ``[A]``. Views: writing into them changes the score."""
        return by_symbol(self)

    @torch.no_grad()
    def set_formula_parameters(self, values: dict[str, Tensor]) -> None:
        """Overwrite parameters by their formula names (the Learn page's hand-made examples)."""
        current = self.formula_parameters()
        for sym, value in values.items():
            if sym not in current:
                known = ", ".join(current) or "none"
                raise InputError(f"{self.name} has no parameter {sym!r}; its parameters: {known}")
            if tuple(value.shape) != tuple(current[sym].shape):
                shape = " × ".join(map(str, current[sym].shape)) or "one number"
                raise InputError(f"{sym} must be {shape} for {self.name} (rows separated by ';')")
            current[sym].copy_(value)


def by_symbol(score: Score) -> dict[str, Tensor]:
    """``score.symbols`` resolved to weight views; a ``v_*`` (a one-row layer) as a vector."""
    weights = {sym: getattr(score, attr).weight for sym, attr in score.symbols.items()}
    return {sym: w[0] if sym.startswith("v") else w for sym, w in weights.items()}


@register
class DotScore(Score):
    r"""Luong dot: :math:`\mathrm{score}(h_t, \bar h_s) = h_t^\top \bar h_s`.

    Shapes: ``h_t`` ``[B, T, Q]``, ``h̄_s`` ``[B, S, Q]`` -> ``[B, T, S]``. No parameters.
    Dot needs keys of the query's size. A bidirectional encoder gives annotations
    ``h_s = [h→_s; h←_s]`` of size 2H for a decoder of size H; then :class:`Attention`
    scores against ``h̄_s = h→_s + h←_s`` (the two directions summed: no parameters, so dot
    stays a pure dot product and does not turn into ``general``); the context still averages
    the full annotations ``h_s``. Any other size mismatch is a ConfigError.
    """

    name = "dot"
    formula = r"\mathrm{score}(h_t, \bar h_s) = h_t^\top \bar h_s"
    needs_equal_dims = True

    def energies(self, queries: Tensor, cache: Tensor) -> Tensor:
        return torch.bmm(queries, cache.transpose(1, 2))  # [B, T, Q] x [B, Q, S] -> [B, T, S]

    def terms(self, query: Tensor, keys: Tensor, t: int, s: int, q: str, k: str) -> list[Term]:
        return [Term("dot product", rf"{q}^\top {k}", query @ keys[s])]


@register
class ScaledDotScore(DotScore):
    r"""Scaled dot (Vaswani et al. 2017): :math:`h_t^\top \bar h_s / \sqrt{d}`, ``d`` = key size.

    Shapes as :class:`DotScore` (and the same bridge when sizes differ). Scaling keeps the
    softmax out of its saturated region when ``d`` is large.
    """

    name = "scaled_dot"
    formula = r"\mathrm{score}(h_t, \bar h_s) = \frac{h_t^\top \bar h_s}{\sqrt{d}}"

    def energies(self, queries: Tensor, cache: Tensor) -> Tensor:
        return super().energies(queries, cache) / math.sqrt(cache.size(-1))

    def terms(self, query: Tensor, keys: Tensor, t: int, s: int, q: str, k: str) -> list[Term]:
        (dot,) = super().terms(query, keys, t, s, q, k)
        d = keys.size(-1)
        return [dot, Term("scaled", rf"\frac{{{dot.latex}}}{{\sqrt{{{d}}}}}", dot.value / math.sqrt(d))]


@register
class GeneralScore(Score):
    r"""Luong general: :math:`h_t^\top W_a \bar h_s`, ``W_a`` ``[Q, K]``.

    ``W_a h̄_s`` is computed once per source (``prepare``), leaving one batched product per
    step. It exists because dot assumes encoder and decoder states live in one space;
    ``W_a`` learns the map between them.
    """

    name = "general"
    formula = r"\mathrm{score}(h_t, \bar h_s) = h_t^\top W_a \bar h_s"
    symbols: ClassVar[dict[str, str]] = {"W_a": "W_a"}

    def __init__(self, query_dim: int, key_dim: int, attn_dim: int, max_src_len: int):
        super().__init__(query_dim, key_dim, attn_dim, max_src_len)
        self.W_a = nn.Linear(key_dim, query_dim, bias=False)

    def prepare(self, keys: Tensor) -> Tensor:
        return self.W_a(keys)  # [B, S, K] -> [B, S, Q]

    def energies(self, queries: Tensor, cache: Tensor) -> Tensor:
        return torch.bmm(queries, cache.transpose(1, 2))  # [B, T, S]

    def terms(self, query: Tensor, keys: Tensor, t: int, s: int, q: str, k: str) -> list[Term]:
        projected = self.W_a(keys[s])  # [Q]
        return [
            Term("W_a key", rf"W_a {k}", projected),
            Term("query . W_a key", rf"{q}^\top (W_a {k})", query @ projected),
        ]


class _TanhScore(Score):
    """Shared body of concat and additive: ``v^T tanh(W q + U k)`` with ``U k`` cached."""

    def __init__(self, query_dim: int, key_dim: int, attn_dim: int, max_src_len: int):
        super().__init__(query_dim, key_dim, attn_dim, max_src_len)
        self.W_q = nn.Linear(query_dim, attn_dim, bias=False)
        self.W_k = nn.Linear(key_dim, attn_dim, bias=False)
        self.v_a = nn.Linear(attn_dim, 1, bias=False)

    def prepare(self, keys: Tensor) -> Tensor:
        return self.W_k(keys)  # [B, S, A], once per source

    def energies(self, queries: Tensor, cache: Tensor) -> Tensor:
        q = self.W_q(queries)  # [B, T, A]
        hidden = tanh_(q.unsqueeze(2) + cache.unsqueeze(1))  # [B, T, S, A], in place: one buffer, not two
        return self.v_a(hidden).squeeze(-1)  # [B, T, S]

    def _parts(self, query: Tensor, key: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """``W_q q`` ``[A]``, ``W_k k`` ``[A]``, ``tanh`` of their sum ``[A]``, the score ``[]``."""
        wq, wk = self.W_q(query), self.W_k(key)
        hidden = tanh_(wq + wk)  # the model's own tanh, so the panel's score is the model's
        return wq, wk, hidden, self.v_a(hidden)[0]


@register
class ConcatScore(_TanhScore):
    r"""Luong concat: :math:`v_a^\top \tanh(W_a [h_t; \bar h_s])`, ``W_a`` ``[A, Q+K]``.

    ``W_a [h_t; h̄_s]`` equals ``W_a^{(q)} h_t + W_a^{(k)} h̄_s`` with ``W_a`` split by columns;
    the key half is applied once per source. Query: the current state ``h_t``.
    """

    name = "concat"
    formula = r"\mathrm{score}(h_t, \bar h_s) = v_a^\top \tanh\left(W_a [h_t ; \bar h_s]\right)"

    def terms(self, query: Tensor, keys: Tensor, t: int, s: int, q: str, k: str) -> list[Term]:
        wq, wk, hidden, e = self._parts(query, keys[s])
        stacked = rf"W_a [{q}; {k}]"
        return [
            Term("W_a [query; key]", stacked, wq + wk),  # W_a [q; k] = W_a^(q) q + W_a^(k) k
            Term("tanh", rf"\tanh({stacked})", hidden),
            Term("v_a . tanh", rf"v_a^\top \tanh({stacked})", e),
        ]

    def formula_parameters(self) -> dict[str, Tensor]:
        # W_a [A, Q+K] is the two halves side by side: a copy, so set_formula_parameters splits it
        return {"W_a": torch.cat([self.W_q.weight, self.W_k.weight], dim=1), "v_a": self.v_a.weight[0]}

    @torch.no_grad()
    def set_formula_parameters(self, values: dict[str, Tensor]) -> None:
        values = dict(values)
        if "W_a" in values:
            W_a = values.pop("W_a")
            if tuple(W_a.shape) != (self.attn_dim, self.query_dim + self.key_dim):
                raise InputError(
                    f"W_a must be {self.attn_dim} × {self.query_dim + self.key_dim} for concat (rows separated by ';')"
                )
            self.W_q.weight.copy_(W_a[:, : self.query_dim])
            self.W_k.weight.copy_(W_a[:, self.query_dim :])
        super().set_formula_parameters(values)


@register
class AdditiveScore(_TanhScore):
    r"""Bahdanau additive: :math:`\mathrm{score}(s_{t-1}, \bar h_s) = v_a^\top \tanh(W_a s_{t-1} + U_a \bar h_s)`.

    ``W_a`` ``[A, Q]``, ``U_a`` ``[A, K]``, ``v_a`` ``[A]``. ``U_a h̄_s`` does not depend on
    the step, so it is computed once per source sentence (``prepare``). The query is the
    previous state ``s_{t-1}`` with the Bahdanau decoder, the current state ``h_t`` with Luong's.
    """

    name = "additive"
    formula = r"\mathrm{score}(s_{t-1}, \bar h_s) = v_a^\top \tanh\left(W_a s_{t-1} + U_a \bar h_s\right)"
    symbols: ClassVar[dict[str, str]] = {"W_a": "W_q", "U_a": "W_k", "v_a": "v_a"}

    def terms(self, query: Tensor, keys: Tensor, t: int, s: int, q: str, k: str) -> list[Term]:
        wq, wk, hidden, e = self._parts(query, keys[s])
        total = rf"W_a {q} + U_a {k}"
        return [
            Term("W_a query", rf"W_a {q}", wq),
            Term("U_a key", rf"U_a {k}", wk),
            Term("sum", total, wq + wk),
            Term("tanh", rf"\tanh({total})", hidden),
            Term("v_a . tanh", rf"v_a^\top \tanh({total})", e),
        ]


@register
class LocationScore(Score):
    r"""Luong location: :math:`a_t = \mathrm{softmax}(W_a h_t)`, ``W_a`` ``[max_src_len, Q]``.

    The score of position ``s`` is row ``s`` of ``W_a h_t``; rows beyond the source length are
    cut off (masked). It never looks at the keys: where to look is a function of the
    decoder state alone.
    """

    name = "location"
    formula = r"a_t = \mathrm{softmax}\left(W_a h_t\right)"
    content_based = False
    symbols: ClassVar[dict[str, str]] = {"W_a": "W_a"}

    def __init__(self, query_dim: int, key_dim: int, attn_dim: int, max_src_len: int):
        super().__init__(query_dim, key_dim, attn_dim, max_src_len)
        self.W_a = nn.Linear(query_dim, max_src_len, bias=False)

    def energies(self, queries: Tensor, cache: Tensor) -> Tensor:
        src_len = cache.size(1)
        if src_len > self.W_a.out_features:
            raise InputError(
                f"location attention was built for at most {self.W_a.out_features} source tokens, "
                f"got {src_len}; shorten the sentence or train with a larger max_src_len"
            )
        return self.W_a(queries)[..., :src_len]  # [B, T, max_src_len] -> [B, T, S]

    def terms(self, query: Tensor, keys: Tensor, t: int, s: int, q: str, k: str) -> list[Term]:
        every = self.W_a(query)  # [max_src_len]: one score per position the layer can address
        cut = every[: keys.size(0)]  # [S]
        return [
            Term("W_a query", rf"W_a {q}", every),
            Term("cut to the source", rf"(W_a {q})_{{0:{keys.size(0)}}}", cut),
            Term("row s", rf"(W_a {q})_{{{s}}}", cut[s]),
        ]


def get_score(name: str) -> type[Score]:
    try:
        return SCORES[name]
    except KeyError:
        raise ConfigError(f"unknown score function {name!r}; choose one of {sorted(SCORES)}") from None
