"""A score function that is not shipped, for tests that a new registry entry works everywhere: the dot
product times a learned single number ``g`` (a parameter of no rows or columns, as a temperature is)."""

from __future__ import annotations

import pytest
import torch
from torch import Tensor, nn

from attnviz.model.scores import SCORES, DotScore, Term

GAIN = 2.0  # g's first value


class GainDotScore(DotScore):
    r""":math:`g \, h_t^\top \bar h_s`, ``g`` a learned number."""

    name = "gain_dot"
    formula = r"\mathrm{score}(h_t, \bar h_s) = g \, h_t^\top \bar h_s"

    def __init__(self, query_dim: int, key_dim: int, attn_dim: int, max_src_len: int):
        super().__init__(query_dim, key_dim, attn_dim, max_src_len)
        self.g = nn.Parameter(torch.tensor(GAIN))

    def energies(self, queries: Tensor, cache: Tensor) -> Tensor:
        return self.g * super().energies(queries, cache)  # [B, T, S]

    def terms(self, query: Tensor, keys: Tensor, t: int, s: int, q: str, k: str) -> list[Term]:
        (dot,) = super().terms(query, keys, t, s, q, k)
        return [dot, Term("gain", rf"g \cdot {dot.latex}", self.g.detach() * dot.value)]

    def formula_parameters(self) -> dict[str, Tensor]:
        return {"g": self.g}


@pytest.fixture
def gain_dot(monkeypatch: pytest.MonkeyPatch) -> str:
    """``gain_dot`` in the registry for one test (every page and function reads the registry)."""
    monkeypatch.setitem(SCORES, GainDotScore.name, GainDotScore)
    return GainDotScore.name
