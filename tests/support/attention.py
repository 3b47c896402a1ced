"""A small ``Attention`` of one score (seeded), and running it on nested lists of queries and keys."""

import torch

from attnviz.model.attention import Attention


def tiny_attention(score: str, q_dim: int = 2, k_dim: int = 2, **kw) -> Attention:
    torch.manual_seed(0)
    return Attention(score, q_dim, k_dim, attn_dim=3, max_src_len=10, **kw)


def attend(att: Attention, queries, keys, mask=None, steps=None):
    keys = torch.tensor(keys, dtype=torch.float32)  # [B, S, K]
    queries = torch.tensor(queries, dtype=torch.float32)  # [B, T, Q]
    if mask is None:
        mask = torch.ones(keys.shape[:2], dtype=torch.bool)
    if steps is None:
        steps = torch.arange(queries.size(1))
    return att(queries, att.prepare(keys, mask), steps)
