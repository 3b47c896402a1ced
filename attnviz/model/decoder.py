"""Attention decoders in the two styles of the literature, each usable with any score function.

- Bahdanau et al. (2014): attend with the previous state ``s_{t-1}``; the context ``c_t``
  enters the RNN input; the output layer reads ``[s_t; c_t; E y_{t-1}]``.
- Luong et al. (2015): RNN step first, attend with ``h_t``; attentional state
  ``h~_t = tanh(W_c [c_t; h_t])`` feeds the output layer and, with input feeding, the next
  RNN input. Without input feeding, teacher-forced training runs the whole RNN in one call
  and all attention in one batched product (the fast path).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from attnviz.data import PAD_ID
from attnviz.model.attention import Attention, AttentionOutput, Memory
from attnviz.model.config import ModelConfig
from attnviz.model.dropout import Dropout
from attnviz.model.recurrence import fast_recurrence

RNNState = Tensor | tuple[Tensor, Tensor]  # GRU h, or LSTM (h, c); each [layers, B, H]


@dataclass
class DecoderState:
    hidden: RNNState
    feed: Tensor | None = None  # [B, H] h~_{t-1} for Luong input feeding

    def select(self, index: Tensor) -> DecoderState:
        """Reorder/repeat batch rows (beam search); ``index`` ``[B']``."""
        hidden = tuple(h[:, index] for h in self.hidden) if isinstance(self.hidden, tuple) else self.hidden[:, index]
        return DecoderState(hidden, None if self.feed is None else self.feed[index])


@dataclass
class Recurrence:
    """What a teacher-forced recurrence gives the output layer (:meth:`BahdanauDecoder.recur`)."""

    outputs: Tensor  # [B, T, H] the RNN's top states s_t
    attention: AttentionOutput  # weights/scores [B, T, S], context [B, T, K]
    queries: Tensor  # [B, T, H] the states that queried attention, s_{t-1}


@dataclass
class StepOutput:
    logits: Tensor  # [B, T, V], or [N, V] for the N positions a ``scored`` mask selects
    attention: AttentionOutput  # weights/scores [B, T, S], context [B, T, K]
    queries: Tensor  # [B, T, Q] the states that queried attention


def _top(hidden: RNNState) -> Tensor:
    h = hidden[0] if isinstance(hidden, tuple) else hidden
    return h[-1]  # [B, H] top layer


def _concat_attention(parts: list[AttentionOutput]) -> AttentionOutput:
    positions = None if parts[0].positions is None else torch.cat([p.positions for p in parts], dim=1)
    return AttentionOutput(
        context=torch.cat([p.context for p in parts], dim=1),
        weights=torch.cat([p.weights for p in parts], dim=1),
        scores=torch.cat([p.scores for p in parts], dim=1),
        positions=positions,
    )


class Decoder(nn.Module):
    """Shared parts: target embedding, RNN, attention, bridge and the output layer."""

    def __init__(self, cfg: ModelConfig, rnn_input: int, out_input: int, summary_dim: int):
        super().__init__()
        self.cfg = cfg
        H = cfg.hidden_dim
        self.embedding = nn.Embedding(cfg.tgt_vocab_size, cfg.emb_dim, padding_idx=PAD_ID)
        rnn_cls = nn.GRU if cfg.cell == "gru" else nn.LSTM
        between_layers = cfg.dropout if cfg.dec_layers > 1 else 0.0  # torch's RNN drops out between layers only
        self.rnn = rnn_cls(rnn_input, H, num_layers=cfg.dec_layers, batch_first=True, dropout=between_layers)
        self.attention = Attention(
            cfg.score, H, cfg.memory_dim, cfg.attn_dim, cfg.max_src_len, cfg.window, cfg.local_content
        )
        self.bridge = nn.Linear(summary_dim, cfg.dec_layers * H)
        self.dropout = Dropout(cfg.dropout)
        if cfg.tie_embeddings:
            self.pre_output = nn.Linear(out_input, cfg.emb_dim, bias=False)
            self.out_bias = nn.Parameter(torch.zeros(cfg.tgt_vocab_size))
        else:
            self.out = nn.Linear(out_input, cfg.tgt_vocab_size)

    def rnn_step(self, inp: Tensor, hidden: RNNState, fused: bool = False) -> tuple[Tensor, RNNState]:
        """One RNN step: inp ``[B, 1, I]`` -> (out ``[B, 1, H]``, hidden).

        Without autograd, or with ``fused``, a single-layer GRU runs as ``gru_cell`` on the same
        weights: the same maths, about twice as fast at batch 1 (decoding), and plain kernels
        that a CUDA graph captures (:mod:`attnviz.training.graphs`). Training otherwise keeps
        ``nn.GRU``, whose backward is faster on the CPU.
        """
        if self.cfg.cell == "gru" and self.cfg.dec_layers == 1 and (fused or not torch.is_grad_enabled()):
            rnn = self.rnn
            h = torch.gru_cell(inp[:, 0], hidden[0], rnn.weight_ih_l0, rnn.weight_hh_l0, rnn.bias_ih_l0, rnn.bias_hh_l0)
            return h.unsqueeze(1), h.unsqueeze(0)  # [B, 1, H], [1, B, H]
        return self.rnn(inp, hidden)

    def generate(self, features: Tensor) -> Tensor:
        """Output layer: features ``[..., F]`` -> logits ``[..., V]``."""
        x = self.dropout(features)
        if self.cfg.tie_embeddings:
            return F.linear(self.pre_output(x), self.embedding.weight, self.out_bias)
        return self.out(x)

    def init_state(self, summary: Tensor) -> DecoderState:
        """The bridge: s_0 = tanh(W_b summary), one slice per decoder layer. summary ``[B, F]``. An LSTM's
        first cell state is zero, or s_0 too (``lstm_cell_init="bridge"``)."""
        B, L, H = summary.size(0), self.cfg.dec_layers, self.cfg.hidden_dim
        h0 = torch.tanh(self.bridge(summary)).view(B, L, H).transpose(0, 1).contiguous()  # [L, B, H]
        if self.cfg.cell == "lstm":
            hidden = (h0, h0.clone() if self.cfg.lstm_cell_init == "bridge" else torch.zeros_like(h0))
        else:
            hidden = h0
        feed = summary.new_zeros(B, H) if self.cfg.input_feeding else None
        return DecoderState(hidden, feed)

    def step(
        self, y_prev: Tensor, state: DecoderState, memory: Memory, t: int, override: Tensor | None = None
    ) -> tuple[StepOutput, DecoderState]:
        """One decoder step. y_prev ``[B]`` -> StepOutput with T = 1.

        ``override`` ``[B, S]``: attention weights to use instead of the computed ones.
        """
        raise NotImplementedError

    def forward(
        self,
        tgt_in: Tensor,
        state: DecoderState,
        memory: Memory,
        teacher_forcing: float = 1.0,
        scored: Tensor | None = None,
    ) -> StepOutput:
        """Decode a whole target. tgt_in ``[B, T]`` starts with <bos>.

        Each step feeds the gold token with probability ``teacher_forcing``, else the
        model's own argmax (scheduled sampling). ``scored`` ``[B, T]`` (training): logits only
        at its True positions, ``[N, V]`` in row-major order, so padding costs no output layer.
        """
        outputs, y = [], tgt_in[:, 0]
        for t in range(tgt_in.size(1)):
            out, state = self.step(y, state, memory, t)
            outputs.append(out)
            if t + 1 < tgt_in.size(1):
                y = tgt_in[:, t + 1]
                if teacher_forcing < 1.0:
                    use_model = torch.rand(y.shape, device=y.device) >= teacher_forcing
                    y = torch.where(use_model, out.logits[:, 0].argmax(-1), y)
        logits = torch.cat([o.logits for o in outputs], dim=1)  # [B, T, V]
        return StepOutput(
            logits if scored is None else logits[scored],
            _concat_attention([o.attention for o in outputs]),
            torch.cat([o.queries for o in outputs], dim=1),
        )


class BahdanauDecoder(Decoder):
    """s_{t-1} queries attention; GRU input [E y_{t-1}; c_t]; output reads [s_t; c_t; E y_{t-1}]."""

    def __init__(self, cfg: ModelConfig, summary_dim: int):
        K, E, H = cfg.memory_dim, cfg.emb_dim, cfg.hidden_dim
        super().__init__(cfg, rnn_input=E + K, out_input=H + K + E, summary_dim=summary_dim)
        # Runs the teacher-forced recurrence instead of :meth:`recur` when set (same arguments and
        # results): attnviz.training.graphs replays it as CUDA graphs while a GPU trains.
        self.recurrence: Callable[[Tensor, DecoderState, Memory], Recurrence] | None = None

    def _attend_and_step(
        self,
        emb: Tensor,
        state: DecoderState,
        memory: Memory,
        t: int,
        override: Tensor | None = None,
        fused: bool = False,
    ) -> tuple[Tensor, AttentionOutput, Tensor, DecoderState]:
        query = _top(state.hidden).unsqueeze(1)  # [B, 1, H] = s_{t-1}
        steps = torch.full((1,), t, device=emb.device)
        att = self.attention(query, memory, steps, None if override is None else override.unsqueeze(1))
        out, hidden = self.rnn_step(torch.cat([emb, att.context], dim=-1), state.hidden, fused)  # out [B, 1, H]
        return out, att, query, DecoderState(hidden)

    def recur(self, emb: Tensor, state: DecoderState, memory: Memory, fused: bool = False) -> Recurrence:
        """The teacher-forced recurrence: the embedded targets ``emb`` ``[B, T, E]`` (``<bos> y_1 ...``)
        -> the RNN outputs s_t ``[B, T, H]``, the attention ``[B, T, S]`` and its queries s_{t-1}
        ``[B, T, H]``. ``fused``: the GRU as ``gru_cell`` (see :meth:`Decoder.rnn_step`)."""
        outs, atts, queries = [], [], []
        for t in range(emb.size(1)):
            out, att, query, state = self._attend_and_step(emb[:, t : t + 1], state, memory, t, fused=fused)
            outs.append(out)
            atts.append(att)
            queries.append(query)
        return Recurrence(torch.cat(outs, dim=1), _concat_attention(atts), torch.cat(queries, dim=1))

    def step(
        self, y_prev: Tensor, state: DecoderState, memory: Memory, t: int, override: Tensor | None = None
    ) -> tuple[StepOutput, DecoderState]:
        emb = self.dropout(self.embedding(y_prev)).unsqueeze(1)  # [B, 1, E]
        out, att, query, state = self._attend_and_step(emb, state, memory, t, override)
        logits = self.generate(torch.cat([out, att.context, emb], dim=-1))  # [B, 1, V]
        return StepOutput(logits, att, query), state

    def _trains_fast(self) -> bool:
        """Training (train mode, with gradient) a one-layer GRU, in float32 or under bf16 autocast:
        the reordered recurrence of :mod:`attnviz.model.recurrence`. Everything else steps as the
        paper writes it."""
        cfg = self.cfg
        return self.training and torch.is_grad_enabled() and cfg.cell == "gru" and cfg.dec_layers == 1

    def forward(
        self,
        tgt_in: Tensor,
        state: DecoderState,
        memory: Memory,
        teacher_forcing: float = 1.0,
        scored: Tensor | None = None,
    ) -> StepOutput:
        if teacher_forcing < 1.0:
            return super().forward(tgt_in, state, memory, teacher_forcing, scored)
        # Teacher forcing: only the recurrence is sequential; the output layer runs once.
        emb = self.dropout(self.embedding(tgt_in))  # [B, T, E]
        if self.recurrence is not None:
            rec = self.recurrence(emb, state, memory)
        elif self._trains_fast():
            rec = Recurrence(*fast_recurrence(self, emb, state.hidden[0], memory))
        else:
            rec = self.recur(emb, state, memory)
        features = torch.cat([rec.outputs, rec.attention.context, emb], dim=-1)  # [B, T, H + K + E]
        logits = self.generate(features if scored is None else features[scored])  # [B, T, V] or [N, V]
        return StepOutput(logits, rec.attention, rec.queries)


class LuongDecoder(Decoder):
    """RNN step, then h_t queries attention; h~_t = tanh(W_c [c_t; h_t]) feeds the output layer."""

    def __init__(self, cfg: ModelConfig, summary_dim: int):
        K, E, H = cfg.memory_dim, cfg.emb_dim, cfg.hidden_dim
        super().__init__(cfg, rnn_input=E + (H if cfg.input_feeding else 0), out_input=H, summary_dim=summary_dim)
        self.W_c = nn.Linear(K + H, H, bias=cfg.attentional_bias)

    def _attentional(
        self, out: Tensor, memory: Memory, steps: Tensor, override: Tensor | None = None
    ) -> tuple[Tensor, AttentionOutput]:
        att = self.attention(out, memory, steps, override)  # out [B, T, H] = h_t
        return torch.tanh(self.W_c(torch.cat([att.context, out], dim=-1))), att  # h~ [B, T, H]

    def step(
        self, y_prev: Tensor, state: DecoderState, memory: Memory, t: int, override: Tensor | None = None
    ) -> tuple[StepOutput, DecoderState]:
        emb = self.dropout(self.embedding(y_prev)).unsqueeze(1)  # [B, 1, E]
        if self.cfg.input_feeding:
            emb = torch.cat([emb, state.feed.unsqueeze(1)], dim=-1)  # [B, 1, E + H]
        out, hidden = self.rnn_step(emb, state.hidden)  # [B, 1, H]
        steps = torch.full((1,), t, device=out.device)
        h_tilde, att = self._attentional(out, memory, steps, None if override is None else override.unsqueeze(1))
        feed = h_tilde[:, 0] if self.cfg.input_feeding else None
        return StepOutput(self.generate(h_tilde), att, out), DecoderState(hidden, feed)

    def forward(
        self,
        tgt_in: Tensor,
        state: DecoderState,
        memory: Memory,
        teacher_forcing: float = 1.0,
        scored: Tensor | None = None,
    ) -> StepOutput:
        if self.cfg.input_feeding or teacher_forcing < 1.0:
            return super().forward(tgt_in, state, memory, teacher_forcing, scored)
        # Fast path: one RNN call over all steps, one batched attention product.
        emb = self.dropout(self.embedding(tgt_in))  # [B, T, E]
        out, _ = self.rnn(emb, state.hidden)  # [B, T, H]
        h_tilde, att = self._attentional(out, memory, torch.arange(tgt_in.size(1), device=out.device))
        return StepOutput(self.generate(h_tilde if scored is None else h_tilde[scored]), att, out)


def build_decoder(cfg: ModelConfig, summary_dim: int) -> Decoder:
    return (BahdanauDecoder if cfg.style == "bahdanau" else LuongDecoder)(cfg, summary_dim)
