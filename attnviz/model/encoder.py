"""Encoders: embedding + (bidirectional) GRU/LSTM, or a small Transformer encoder.

Each returns the annotations attention reads, a summary vector the bridge turns into the
decoder's first state, and (Transformer only) its self-attention maps.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Self

import torch
from torch import _VF, Tensor, nn

from attnviz.data import PAD_ID
from attnviz.model.config import ModelConfig
from attnviz.model.dropout import Dropout


@dataclass
class EncoderOutput:
    memory: Tensor  # [B, S, K] annotations h_j
    summary: Tensor  # [B, F] what the bridge reads
    self_attention: Tensor | None = None  # [B, layers, heads, S, S] (Transformer only)


def reverse_index(lengths: Tensor, steps: int) -> Tensor:
    """``[B, S]`` positions that reverse each row's first ``lengths[b]`` steps and keep the padding
    in place; applying it twice is the identity."""
    t = torch.arange(steps, device=lengths.device).unsqueeze(0)  # [1, S]
    last = lengths.unsqueeze(1) - 1  # [B, 1]
    return torch.where(t <= last, last - t, t)  # [B, S]


class RNNEncoder(nn.Module):
    """Embedding + GRU/LSTM, bidirectional by default.

    Padding is handled without packing: each direction runs over the padded batch, the
    backward one on each row reversed within its length, so a row never reads its padding
    before its words. The annotations are those of ``pack_padded_sequence`` (zero at padding)
    and the parameters those of ``nn.GRU``/``nn.LSTM`` (``self.rnn``), but training avoids
    the packed path's backward, which on the CPU builds a full-size gradient per time step.
    """

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
        self.dropout = Dropout(cfg.dropout)
        self.directions = 2 if cfg.bidirectional else 1
        self.summary_dim = cfg.hidden_dim * self.directions

    def _weights(self, layer: int, suffix: str) -> list[Tensor]:
        """The input, recurrent and bias weights of one direction (``""`` or ``"_reverse"``) of one layer."""
        return [
            getattr(self.rnn, f"{name}_l{layer}{suffix}") for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
        ]

    def flatten_parameters(self) -> None:
        """On cuDNN, give each direction of each layer one contiguous weight buffer of its own.

        ``forward`` runs every direction of every layer as a one-layer RNN of its own (``_run``),
        and cuDNN uses such weights in place only when they begin their own buffer.
        ``nn.GRU.flatten_parameters`` packs all of them into one buffer, where only layer 0's
        forward direction begins at the start, and every other call would warn "RNN module weights
        are not part of single contiguous chunk of memory" and copy its weights. Runs after every
        move (``.to``, ``.cuda``: see ``_apply``); a no-op where cuDNN does not run (the CPU).
        """
        for layer in range(self.rnn.num_layers):
            for suffix in ("", "_reverse")[: self.directions]:
                weights = self._weights(layer, suffix)
                if _uses_cudnn(weights):
                    _flatten_for_cudnn(weights, self.rnn.mode, self.rnn.hidden_size)

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Self:
        module = super()._apply(fn, recurse)  # nn.GRU's own _apply packs all its weights into one buffer
        self.flatten_parameters()
        return module

    def _run(self, x: Tensor, layer: int, suffix: str) -> Tensor:
        """One direction of one layer over ``x`` ``[B, S, I]`` from a zero state -> ``[B, S, H]``."""
        rnn = self.rnn
        weights = self._weights(layer, suffix)
        h0 = x.new_zeros(1, x.size(0), rnn.hidden_size)  # [1, B, H]
        if isinstance(rnn, nn.LSTM):
            return _VF.lstm(x, (h0, h0), weights, True, 1, 0.0, self.training, False, True)[0]
        return _VF.gru(x, h0, weights, True, 1, 0.0, self.training, False, True)[0]

    def forward(self, src: Tensor, lengths: Tensor, embedded: Tensor | None = None) -> EncoderOutput:
        """src ``[B, S]`` token ids, lengths ``[B]``; ``embedded`` ``[B, S, E]`` replaces
        ``embedding(src)`` (gradient attributions on the source embeddings)."""
        lengths = lengths.to(src.device)
        x = self.dropout(self.embedding(src) if embedded is None else embedded)  # [B, S, E]
        keep = (src != PAD_ID).unsqueeze(-1).to(x.dtype)  # [B, S, 1]
        last = (lengths - 1).view(-1, 1, 1)  # [B, 1, 1] position of each row's last token
        rev = reverse_index(lengths, src.size(1)).unsqueeze(-1) if self.directions == 2 else None  # [B, S, 1]
        for layer in range(self.rnn.num_layers):
            if layer:
                x = nn.functional.dropout(x, self.rnn.dropout, self.training)
            outs = [self._run(x, layer, "")]  # [B, S, H]
            if rev is not None:
                backward = self._run(x.gather(1, rev.expand(-1, -1, x.size(-1))), layer, "_reverse")
                outs.append(backward.gather(1, rev.expand(-1, -1, backward.size(-1))))  # back in source order
            x = torch.cat(outs, dim=-1) * keep  # [B, S, dirs * H], zero at padding
        H = self.rnn.hidden_size
        forward_final = x[..., :H].gather(1, last.expand(-1, 1, H)).squeeze(1)  # [B, H] after the last token
        finals = [forward_final] + ([x[:, 0, H:]] if self.directions == 2 else [])  # backward: after the first
        return EncoderOutput(x, torch.cat(finals, dim=-1))  # summary [B, dirs * H]


def _uses_cudnn(weights: list[Tensor]) -> bool:
    """Whether cuDNN runs an RNN on ``weights`` (the conditions of ``nn.RNNBase.flatten_parameters``)."""
    return (
        all(w.is_cuda and w.dtype == weights[0].dtype and torch.backends.cudnn.is_acceptable(w) for w in weights)
        and len({w.data_ptr() for w in weights}) == len(weights)  # aliased weights take the copying path
        and torch._use_cudnn_rnn_flatten_weight()
    )


def _flatten_for_cudnn(weights: list[Tensor], mode: str, hidden_size: int) -> None:
    """Copy one direction's ``weights`` (input, recurrent, biases) into a new buffer laid out as a
    one-layer, one-direction cuDNN RNN, and make them views of it."""
    from torch.backends.cudnn import rnn as cudnn_rnn

    input_size = weights[0].size(1)  # weight_ih [gates * H, I]
    with torch.no_grad(), torch.cuda.device_of(weights[0]):
        torch._cudnn_rnn_flatten_weight(
            weights, len(weights), input_size, cudnn_rnn.get_cudnn_mode(mode), hidden_size, 0, 1, True, False
        )


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
        self.dropout = Dropout(cfg.dropout)
        self.scale = math.sqrt(dim)
        self.summary_dim = dim
        self.register_buffer("positions", _sinusoids(cfg.max_src_len, dim), persistent=False)  # [P, D]

    def forward(self, src: Tensor, lengths: Tensor, embedded: Tensor | None = None) -> EncoderOutput:
        pad_mask = src == PAD_ID  # [B, S]
        emb = self.embedding(src) if embedded is None else embedded  # [B, S, D]
        x = self.dropout(emb * self.scale + self.positions[: src.size(1)])  # [B, S, D]
        maps = []
        for layer in self.layers:
            x, m = layer(x, pad_mask)
            maps.append(m)
        keep = (~pad_mask).unsqueeze(-1).to(x.dtype)  # [B, S, 1]
        summary = (x * keep).sum(1) / keep.sum(1)  # [B, D] mean over real tokens
        return EncoderOutput(x, summary, torch.stack(maps, dim=1))  # maps [B, layers, heads, S, S]


def _sinusoids(length: int, dim: int) -> Tensor:
    """The sinusoidal position table ``[length, dim]``. A checkpoint does not store it, so on the meta
    device (where a checkpoint's model is built) it is made on the CPU: it must hold its values."""
    device = torch.get_default_device()
    device = torch.device("cpu") if device.type == "meta" else device
    position = torch.arange(length, device=device).unsqueeze(1)  # [P, 1]
    freq = torch.exp(torch.arange(0, dim, 2, device=device) * (-math.log(10000.0) / dim))  # [D/2]
    table = torch.zeros(length, dim, device=device)
    table[:, 0::2] = torch.sin(position * freq)
    table[:, 1::2] = torch.cos(position * freq[: dim // 2])
    return table


def build_encoder(cfg: ModelConfig) -> RNNEncoder | TransformerEncoder:
    return TransformerEncoder(cfg) if cfg.encoder == "transformer" else RNNEncoder(cfg)
