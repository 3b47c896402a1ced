"""The encoder-decoder: an encoder, a bridge to the decoder's first state, an attention decoder."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from attnviz.data import PAD_ID
from attnviz.model.attention import Memory
from attnviz.model.config import ModelConfig
from attnviz.model.decoder import DecoderState, StepOutput, build_decoder
from attnviz.model.encoder import EncoderOutput, build_encoder


@dataclass
class Encoded:
    """The source side, computed once per batch and shared by every decoder step."""

    encoder: EncoderOutput
    memory: Memory
    state: DecoderState


class Seq2Seq(nn.Module):
    """Encoder + attention decoder. Pure ``nn.Module``: no I/O, no vocabularies, no state
    stored during forward (decoding the same shared model from many threads is safe)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.encoder = build_encoder(cfg)
        self.decoder = build_decoder(cfg, self.encoder.summary_dim)

    def encode(self, src: Tensor, lengths: Tensor, embedded: Tensor | None = None) -> Encoded:
        """src ``[B, S]`` ids (padded with PAD_ID), lengths ``[B]``; ``embedded`` ``[B, S, E]``
        stands in for the source embeddings (they stay the input of attribution methods)."""
        enc = self.encoder(src, lengths, embedded)
        memory = self.decoder.attention.prepare(enc.memory, src != PAD_ID)
        return Encoded(enc, memory, self.decoder.init_state(enc.summary))

    def forward(
        self, src: Tensor, lengths: Tensor, tgt_in: Tensor, teacher_forcing: float = 1.0, scored: Tensor | None = None
    ) -> StepOutput:
        """Teacher-forced decode. tgt_in ``[B, T]`` (<bos> y_1 ... y_{T-1}) -> logits ``[B, T, V]``
        (``[N, V]`` at the True positions of ``scored`` ``[B, T]``, see ``Decoder.forward``)."""
        enc = self.encode(src, lengths)
        return self.decoder(tgt_in, enc.state, enc.memory, teacher_forcing, scored)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def score_parameters(self) -> dict[str, list[int]]:
        """Learned parameters of the attention (name -> shape), for the app's Learn page."""
        return {n: list(p.shape) for n, p in self.decoder.attention.named_parameters()}


def build_model(cfg: ModelConfig, seed: int | None = None) -> Seq2Seq:
    """Build a model; with ``seed`` the initial weights are reproducible."""
    if seed is not None:
        torch.manual_seed(seed)
    return Seq2Seq(cfg)
