"""Every layer's and head's cross-attention of one Hugging Face decode, and the ``Alignment`` of any
choice of them: one head, one layer's heads averaged, every layer and head averaged.

What an ``Alignment`` of a Transformer holds, field by field:

* ``weights``: the chosen cross-attention, rows folded onto attnviz tokens (:mod:`attnviz.external.pieces`);
  averaging heads or layers keeps each row a distribution;
* ``scores``: the log of the weights. A Transformer's energies ``q·k/√d`` are not returned, and
  they differ from these by a constant per row, which the softmax ignores: the same softmax, the
  same ranking, shown on the log scale (``-inf`` where a weight is 0);
* ``contexts``: the weights applied to the encoder's output states (``[tgt, d_model]``): which
  source states the step mixed, as attnviz shows for its RNNs (the model's own context is this
  through each head's value projection);
* ``states``: the decoder's last hidden state at each step (``[tgt, d_model]``);
* ``encoder_attention``: the encoder's self-attention, ``[layers, heads, src, src]``.

``score`` is ``"<model_type> cross-attention"`` and ``style`` ``"transformer"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attnviz.decoding import Alignment
from attnviz.errors import InputError
from attnviz.external.pieces import Grouping
from attnviz.links import merge_groups

STYLE = "transformer"


@dataclass
class CrossAttention:
    """One decode (free or forced) of a Hugging Face encoder-decoder, every cross-attention head kept."""

    source: Grouping  # attnviz source tokens (ending in <eos>) and their tokenizer positions
    target: Grouping  # attnviz target tokens and their positions among the labels
    source_pieces: list[str]  # the tokenizer's own pieces
    target_pieces: list[str]
    attention: np.ndarray  # [layers, heads, tgt_pieces, src_pieces], as transformers returns it
    encoder_attention: np.ndarray  # [enc_layers, enc_heads, src_pieces, src_pieces]
    encoder_states: np.ndarray  # [src_pieces, d_model]
    decoder_states: np.ndarray  # [tgt_pieces, d_model]
    token_log_probs: np.ndarray  # [tgt_pieces]
    source_unknown: list[bool]  # [src_pieces]
    model_type: str
    text: str = ""  # the target as the tokenizer decodes it, special tokens left out
    hypotheses: list[CrossAttention] = field(default_factory=list)  # beam n-best, best first (self first)

    @property
    def layers(self) -> int:
        return int(self.attention.shape[0])

    @property
    def heads(self) -> int:
        return int(self.attention.shape[1])

    @property
    def source_tokens(self) -> list[str]:
        return list(self.source.tokens)

    @property
    def target_tokens(self) -> list[str]:
        return list(self.target.tokens)

    @property
    def log_prob(self) -> float:
        """The sum of the target pieces' log-probabilities (those of the shown tokens)."""
        kept = [i for g in self.target.groups for i in g]
        return float(np.asarray(self.token_log_probs)[kept].sum())

    def pieces_weights(self, layer: int | None = None, head: int | None = None) -> np.ndarray:
        """The chosen cross-attention on the tokenizer's pieces, ``[tgt_pieces, src_pieces]``: one head,
        a layer's heads averaged (``head=None``), or everything averaged (both ``None``)."""
        a = np.asarray(self.attention, dtype=np.float64)  # [layers, heads, tgt, src]
        if layer is not None and not 0 <= layer < self.layers:
            raise InputError(f"layer {layer} is out of range; the decoder has layers 0-{self.layers - 1}")
        if head is not None and not 0 <= head < self.heads:
            raise InputError(f"head {head} is out of range; each layer has heads 0-{self.heads - 1}")
        if layer is None and head is not None:
            raise InputError(f"head {head} of which layer? A head belongs to one layer; give the layer too")
        if layer is None:
            return a.mean(axis=(0, 1))
        return a[layer].mean(axis=0) if head is None else a[layer, head]

    def weights_of(self, pieces: np.ndarray) -> np.ndarray:
        """Weights on the tokenizer's pieces (``[..., tgt_pieces, src_pieces]``) merged onto the attnviz
        tokens: ``[..., tgt, src]``, a token's rows averaged (:attr:`Grouping.rows`), its columns summed."""
        return merge_groups(pieces, self.target.rows, self.source.groups)

    def weights(self, layer: int | None = None, head: int | None = None) -> np.ndarray:
        """:meth:`pieces_weights` merged onto the attnviz tokens: ``[tgt, src]``."""
        return self.weights_of(self.pieces_weights(layer, head))

    def head_stack(self) -> np.ndarray:
        """Every head on the attnviz tokens: ``[layers, heads, tgt, src]``."""
        return self.weights_of(self.attention)

    def heads_weights(self, heads: list[tuple[int, int]]) -> np.ndarray:
        """The average of the chosen ``(layer, head)`` pairs on the pieces (Whisper's alignment heads):
        ``[tgt_pieces, src_pieces]``."""
        if not heads:
            raise InputError("choose one head or more, as (layer, head) pairs")
        return np.mean([self.pieces_weights(layer, head) for layer, head in heads], axis=0)

    def alignment(
        self, layer: int | None = None, head: int | None = None, heads: list[tuple[int, int]] | None = None
    ) -> Alignment:
        """The chosen cross-attention as the ``Alignment`` every attnviz view reads (see the module's
        docstring for what each field holds): one head, a layer, everything, or the average of ``heads``
        (``(layer, head)`` pairs) when given. A beam decode's n-best come along."""

        def pick(c: CrossAttention) -> np.ndarray:
            return c.heads_weights(heads) if heads else c.pieces_weights(layer, head)

        al = self._one(pick(self))
        if self.hypotheses:
            al.hypotheses = [al if h is self else h._one(pick(h)) for h in self.hypotheses]
        return al

    def _one(self, pieces: np.ndarray) -> Alignment:
        """``pieces`` (``[tgt_pieces, src_pieces]`` weights) as an ``Alignment`` on the attnviz tokens."""
        rows, cols = self.target.rows, self.source.groups
        w = self.weights_of(pieces)  # [tgt, src]
        with np.errstate(divide="ignore"):
            scores = np.log(w)  # [tgt, src]
        piece_contexts = pieces @ np.asarray(self.encoder_states, dtype=np.float64)  # [tgt_pieces, d_model]
        contexts = merge_groups(piece_contexts, rows, None)  # [tgt, d_model]
        encoder = merge_groups(self.encoder_attention, cols, cols)  # [enc_layers, enc_heads, src, src]
        unknown = [any(self.source_unknown[i] for i in g) for g in cols]
        lp = np.asarray(self.token_log_probs, dtype=np.float64)
        return Alignment(
            source_tokens=self.source_tokens,
            target_tokens=self.target_tokens,
            weights=w.astype(np.float32),
            scores=scores,
            contexts=contexts.astype(np.float32),
            states=merge_groups(self.decoder_states, rows, None).astype(np.float32),
            source_unknown=unknown,
            score=f"{self.model_type} cross-attention",
            style=STYLE,
            log_prob=self.log_prob,
            token_log_probs=np.array([lp[g].sum() for g in self.target.groups]),
            encoder_attention=encoder.astype(np.float32),
        )

    def alignments(self) -> dict[str, Alignment]:
        """Every choice by name: ``"all layers and heads"``, ``"layer L"`` (its heads averaged) and
        ``"layer L, head H"``, 0-based as transformers counts them."""
        out = {"all layers and heads": self.alignment()}
        for layer in range(self.layers):
            out[f"layer {layer}"] = self.alignment(layer)
            for head in range(self.heads):
                out[f"layer {layer}, head {head}"] = self.alignment(layer, head)
        return out
