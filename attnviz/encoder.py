"""Encoders: embedding + (bidirectional) GRU/LSTM, or a small Transformer encoder.

Each returns the annotations attention reads, a summary vector the bridge turns into the
decoder's first state, and (Transformer only) its self-attention maps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from attnviz.config import ModelConfig
from attnviz.data.vocab import PAD_ID


@dataclass
class EncoderOutput:
    memory: Tensor  # [B, S, K] annotations h_j
    summary: Tensor  # [B, F] what the bridge reads
    self_attention: Tensor | None = None  # [B, layers, heads, S, S] (Transformer only)


class RNNEncoder(nn.Module):
    """Embedding + GRU/LSTM, bidirectional by default; padding handled by packing."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.embedding = nn.Embedding(cfg.src_vocab_size, cfg.emb_dim, padding_idx=PAD_ID)
        rnn_cls = nn.GRU if cfg.encoder == "gru" else nn.LSTM
        self.rnn = rnn_cls(
            cfg.emb_dim,
            cfg.hidden_dim,
            num_layers=cfg.enc_layers,
            bidirectional=cfg.bidirectional,
            batch_first=True,
            dropout=cfg.dropout if cfg.enc_layers > 1 else 0.0,
        )
        self.dropout = nn.Dropout(cfg.dropout)
        self.directions = 2 if cfg.bidirectional else 1
        self.summary_dim = cfg.hidden_dim * self.directions

    def forward(self, src: Tensor, lengths: Tensor) -> EncoderOutput:
        """src ``[B, S]`` token ids, lengths ``[B]``."""
        emb = self.dropout(self.embedding(src))  # [B, S, E]
        packed = pack_padded_sequence(emb, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, final = self.rnn(packed)
        memory, _ = pad_packed_sequence(out, batch_first=True, total_length=src.size(1))  # [B, S, K]
        h_n = final[0] if isinstance(final, tuple) else final  # [layers * dirs, B, H]
        last = h_n.view(-1, self.directions, src.size(0), h_n.size(-1))[-1]  # [dirs, B, H]
        summary = torch.cat(list(last), dim=-1)  # [B, dirs * H]: forward final ; backward final
        return EncoderOutput(memory, summary)


class _SelfAttentionBlock(nn.Module):
    """Post-norm Transformer layer that returns its per-head attention maps."""

    def __init__(self, dim: int, heads: int, dropout: float):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, dropout=dropout, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.ReLU(), nn.Dropout(dropout), nn.Linear(4 * dim, dim))
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, pad_mask: Tensor) -> tuple[Tensor, Tensor]:
        """x ``[B, S, D]``, pad_mask ``[B, S]`` True at padding -> (x, maps ``[B, heads, S, S]``)."""
        out, maps = self.attn(x, x, x, key_padding_mask=pad_mask, need_weights=True, average_attn_weights=False)
        x = self.norm1(x + self.dropout(out))
        x = self.norm2(x + self.dropout(self.ff(x)))
        return x, maps


class TransformerEncoder(nn.Module):
    """Embedding * sqrt(d) + sinusoidal positions, then self-attention layers."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        dim = cfg.emb_dim
        self.embedding = nn.Embedding(cfg.src_vocab_size, dim, padding_idx=PAD_ID)
        self.layers = nn.ModuleList(_SelfAttentionBlock(dim, cfg.heads, cfg.dropout) for _ in range(cfg.enc_layers))
        self.dropout = nn.Dropout(cfg.dropout)
        self.scale = math.sqrt(dim)
        self.summary_dim = dim
        position = torch.arange(cfg.max_src_len).unsqueeze(1)  # [P, 1]
        freq = torch.exp(torch.arange(0, dim, 2) * (-math.log(10000.0) / dim))  # [D/2]
        table = torch.zeros(cfg.max_src_len, dim)
        table[:, 0::2] = torch.sin(position * freq)
        table[:, 1::2] = torch.cos(position * freq[: dim // 2])
        self.register_buffer("positions", table, persistent=False)  # [P, D]

    def forward(self, src: Tensor, lengths: Tensor) -> EncoderOutput:
        pad_mask = src == PAD_ID  # [B, S]
        x = self.dropout(self.embedding(src) * self.scale + self.positions[: src.size(1)])  # [B, S, D]
        maps = []
        for layer in self.layers:
            x, m = layer(x, pad_mask)
            maps.append(m)
        keep = (~pad_mask).unsqueeze(-1).to(x.dtype)  # [B, S, 1]
        summary = (x * keep).sum(1) / keep.sum(1)  # [B, D] mean over real tokens
        return EncoderOutput(x, summary, torch.stack(maps, dim=1))  # maps [B, layers, heads, S, S]


def build_encoder(cfg: ModelConfig) -> RNNEncoder | TransformerEncoder:
    return TransformerEncoder(cfg) if cfg.encoder == "transformer" else RNNEncoder(cfg)
