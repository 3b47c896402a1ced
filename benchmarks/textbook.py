"""A plain textbook Bahdanau model: the reference that ``compare.py`` times attnviz against.

The same architecture as attnviz's ``additive``/``bahdanau`` model with a bidirectional GRU
encoder (same layers, same parameter count), written the way the well-known seq2seq
tutorials write it:

- the decoder is called once per target step from a Python loop;
- the attention module projects the encoder annotations, ``U_a h_j``, inside its forward,
  so the projection is recomputed at every step;
- the output layer runs once per step, and the logits are written into a preallocated
  ``[B, T, V]`` tensor one step at a time.

Nothing here is tuned; it is the baseline, not a competitor.
"""

from __future__ import annotations

import sys

if __name__ == "__main__":  # the model compare.py times, not a script of its own
    sys.exit("textbook.py is the model compare.py times: run python benchmarks/compare.py --help")

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

PAD_ID = 0


class Encoder(nn.Module):
    """Embedding + bidirectional GRU; returns annotations and ``[fwd final; bwd final]``."""

    def __init__(self, vocab: int, emb: int, hidden: int, dropout: float):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb, padding_idx=PAD_ID)
        self.rnn = nn.GRU(emb, hidden, bidirectional=True, batch_first=True)
        self.dropout = nn.Dropout(dropout)

    def forward(self, src: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor]:
        embedded = self.dropout(self.embedding(src))  # [B, S, E]
        packed = pack_padded_sequence(embedded, lengths.cpu(), batch_first=True, enforce_sorted=False)
        packed_out, hidden = self.rnn(packed)  # hidden [2, B, H]
        annotations, _ = pad_packed_sequence(packed_out, batch_first=True, total_length=src.size(1))  # [B, S, 2H]
        return annotations, torch.cat([hidden[0], hidden[1]], dim=1)  # [B, 2H]


class AdditiveAttention(nn.Module):
    """``a_t = softmax(v^T tanh(W s_{t-1} + U h_j))`` over the real source tokens."""

    def __init__(self, dec_hidden: int, enc_dim: int, attn_dim: int):
        super().__init__()
        self.W = nn.Linear(dec_hidden, attn_dim, bias=False)
        self.U = nn.Linear(enc_dim, attn_dim, bias=False)
        self.v = nn.Linear(attn_dim, 1, bias=False)

    def forward(self, s_prev: Tensor, annotations: Tensor, mask: Tensor) -> Tensor:
        """s_prev ``[B, H]``, annotations ``[B, S, K]``, mask ``[B, S]`` -> weights ``[B, S]``."""
        energy = torch.tanh(self.W(s_prev).unsqueeze(1) + self.U(annotations))  # [B, S, A], U every step
        scores = self.v(energy).squeeze(2)  # [B, S]
        scores = scores.masked_fill(~mask, float("-inf"))
        return torch.softmax(scores, dim=1)


class Decoder(nn.Module):
    """One step: attend with ``s_{t-1}``, GRU on ``[E y; c]``, output over ``[s_t; c_t; E y]``."""

    def __init__(self, vocab: int, emb: int, hidden: int, enc_dim: int, attn_dim: int, dropout: float):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb, padding_idx=PAD_ID)
        self.attention = AdditiveAttention(hidden, enc_dim, attn_dim)
        self.rnn = nn.GRU(emb + enc_dim, hidden, batch_first=True)
        self.out = nn.Linear(hidden + enc_dim + emb, vocab)
        self.dropout = nn.Dropout(dropout)

    def forward(self, y_prev: Tensor, s_prev: Tensor, annotations: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        """y_prev ``[B]``, s_prev ``[B, H]`` -> (logits ``[B, V]``, s_t ``[B, H]``)."""
        embedded = self.dropout(self.embedding(y_prev)).unsqueeze(1)  # [B, 1, E]
        weights = self.attention(s_prev, annotations, mask).unsqueeze(1)  # [B, 1, S]
        context = torch.bmm(weights, annotations)  # [B, 1, S] x [B, S, K] -> [B, 1, K]
        output, hidden = self.rnn(torch.cat([embedded, context], dim=2), s_prev.unsqueeze(0))  # [B, 1, H]
        features = torch.cat([output.squeeze(1), context.squeeze(1), embedded.squeeze(1)], dim=1)  # [B, H+K+E]
        return self.out(self.dropout(features)), hidden.squeeze(0)


class TextbookSeq2Seq(nn.Module):
    """Encoder, ``s_0 = tanh(W_b [fwd; bwd])``, and the per-step decoder loop."""

    def __init__(self, src_vocab: int, tgt_vocab: int, emb: int, hidden: int, attn_dim: int, dropout: float = 0.1):
        super().__init__()
        self.encoder = Encoder(src_vocab, emb, hidden, dropout)
        self.bridge = nn.Linear(2 * hidden, hidden)
        self.decoder = Decoder(tgt_vocab, emb, hidden, 2 * hidden, attn_dim, dropout)
        self.tgt_vocab = tgt_vocab

    def forward(self, src: Tensor, lengths: Tensor, tgt_in: Tensor) -> Tensor:
        """Teacher-forced: src ``[B, S]``, tgt_in ``[B, T]`` (starts with <bos>) -> logits ``[B, T, V]``."""
        annotations, summary = self.encoder(src, lengths)
        mask = src != PAD_ID  # [B, S]
        hidden = torch.tanh(self.bridge(summary))  # [B, H]
        batch, steps = tgt_in.shape
        outputs = torch.zeros(batch, steps, self.tgt_vocab, device=src.device)  # [B, T, V]
        for t in range(steps):
            logits, hidden = self.decoder(tgt_in[:, t], hidden, annotations, mask)
            outputs[:, t] = logits
        return outputs

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())
