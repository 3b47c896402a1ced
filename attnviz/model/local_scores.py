"""Luong's local attention (2015, §3.2): a content score from :mod:`attnviz.model.scores` restricted
to a window ``[p_t - D, p_t + D]``; local-m places the window by the step, local-p predicts it and
multiplies the weights by a Gaussian around it. The window itself and the Gaussian are applied by the
shared step (:mod:`attnviz.model.attention`); these classes give ``p_t`` and the content score.
"""

from __future__ import annotations

from typing import ClassVar

import torch
from torch import Tensor, nn

from attnviz.errors import ConfigError
from attnviz.model.scores import Score, Term, by_symbol, get_score, register


class LocalScore(Score):
    """Local attention (Luong 2015 §3.2): a content score restricted to ``[p_t - D, p_t + D]``."""

    def __init__(self, query_dim: int, key_dim: int, attn_dim: int, max_src_len: int, content: str = "general"):
        super().__init__(query_dim, key_dim, attn_dim, max_src_len)
        content_cls = get_score(content)
        if issubclass(content_cls, LocalScore) or not content_cls.content_based:
            raise ConfigError(f"local attention needs a content score, not {content!r}")
        if content_cls.needs_equal_dims and query_dim != key_dim:
            raise ConfigError(f"the content score {content!r} needs keys of the query's size")
        self.content = content_cls(query_dim, key_dim, attn_dim, max_src_len)

    def prepare(self, keys: Tensor) -> Tensor:
        return self.content.prepare(keys)

    def energies(self, queries: Tensor, cache: Tensor) -> Tensor:
        return self.content.energies(queries, cache)

    def terms(self, query: Tensor, keys: Tensor, t: int, s: int, q: str, k: str) -> list[Term]:
        """``p_t`` first (how the window is placed), then the content score."""
        return [*self.position_terms(query, keys.size(0), t, q), *self.content.terms(query, keys, t, s, q, k)]

    def position_terms(self, query: Tensor, src_len: int, t: int, q: str) -> list[Term]:
        """How ``p_t`` is found for query ``[Q]``; the last term is ``p_t``."""
        raise NotImplementedError

    def formula_parameters(self) -> dict[str, Tensor]:
        return {**self.content.formula_parameters(), **by_symbol(self)}


@register
class LocalMScore(LocalScore):
    r"""Luong local-m: :math:`p_t = \min(t, S - 1)`; :math:`a_t(s) = \mathrm{softmax}(\mathrm{score}(h_t, \bar h_s))`
    over :math:`s \in [p_t - D, p_t + D]`, zero elsewhere.

    Monotonic alignment: step ``t`` looks around source position ``t`` (the paper's :math:`p_t = t`),
    clipped to the last source position for a step past the source's end. The content score is
    ``general`` unless configured otherwise.
    """

    name = "local_m"
    formula = (
        r"p_t = \min(t, S - 1),\quad a_t(s) = \frac{\exp \mathrm{score}(h_t, \bar h_s)}"
        r"{\sum_{|s'-p_t| \le D} \exp \mathrm{score}(h_t, \bar h_{s'})},\ |s - p_t| \le D"
    )

    def position_terms(self, query: Tensor, src_len: int, t: int, q: str) -> list[Term]:
        # as Attention._positions: the step, clipped to the last source position
        return [Term("p_t", rf"p_t = \min(t, S - 1) = \min({t}, {src_len - 1})", query.new_tensor(min(t, src_len - 1)))]


@register
class LocalPScore(LocalScore):
    r"""Luong local-p: :math:`p_t = S \cdot \operatorname{sigmoid}(v_p^\top \tanh(W_p h_t))`,
    :math:`a_t(s) = \mathrm{align}(h_t, \bar h_s) \exp\left(-\frac{(s - p_t)^2}{2\sigma^2}\right)`,
    :math:`\sigma = D/2`.

    ``align`` is the softmax of the content score over the window ``|s - p_t| <= D``; the
    Gaussian then favours positions near ``p_t``. As in the paper the product is not
    renormalised, so a row sums to at most one. ``S`` is the source length (``<eos>``
    included) and positions are 0-based.
    """

    name = "local_p"
    formula = (
        r"p_t = S \cdot \operatorname{sigmoid}\left(v_p^\top \tanh(W_p h_t)\right),\quad "
        r"a_t(s) = \mathrm{align}(h_t, \bar h_s)\, \exp\left(-\frac{(s-p_t)^2}{2\sigma^2}\right),"
        r"\ \sigma = \tfrac{D}{2}"
    )
    predictive = True
    symbols: ClassVar[dict[str, str]] = {"W_p": "W_p", "v_p": "v_p"}

    def __init__(self, query_dim: int, key_dim: int, attn_dim: int, max_src_len: int, content: str = "general"):
        super().__init__(query_dim, key_dim, attn_dim, max_src_len, content)
        self.W_p = nn.Linear(query_dim, attn_dim, bias=False)
        self.v_p = nn.Linear(attn_dim, 1, bias=False)

    def predict_position(self, queries: Tensor, lengths: Tensor) -> Tensor:
        """``p_t`` ``[B, T]`` for queries ``[B, T, Q]`` and source lengths ``[B]``."""
        gate = torch.sigmoid(self.v_p(torch.tanh(self.W_p(queries)))).squeeze(-1)  # [B, T]
        return lengths.unsqueeze(1).to(gate.dtype) * gate

    def position_terms(self, query: Tensor, src_len: int, t: int, q: str) -> list[Term]:
        projected = self.W_p(query)  # [A]
        hidden = torch.tanh(projected)
        logit = self.v_p(hidden)[0]
        gate = torch.sigmoid(logit)
        inner = rf"v_p^\top \tanh(W_p {q})"
        sigmoid = r"\operatorname{sigmoid}(\cdot)"
        return [
            Term("W_p query", rf"W_p {q}", projected),
            Term("tanh(W_p query)", rf"\tanh(W_p {q})", hidden),
            Term("v_p . tanh", inner, logit),
            Term("sigmoid", rf"\operatorname{{sigmoid}}({inner})", gate),
            Term("p_t", rf"p_t = S \cdot \operatorname{{sigmoid}}(\cdot) = {src_len} \cdot {sigmoid}", src_len * gate),
        ]
