"""CUDA graphs for the Bahdanau decoder's teacher-forced recurrence while a GPU trains.

A training step of the shipped recipes on a GPU is bound by launching kernels, not by arithmetic:
the Bahdanau decoder attends and steps its GRU once per target position, a few dozen small kernels
forward and as many backward, at batch 128. :class:`RecurrenceGraphs` captures that loop, forward
and backward, as CUDA graphs (``torch.cuda.make_graphed_callables``) and replays them, one launch
each way per step.

A graph has fixed shapes, so each batch is padded up to a bucket: the target steps and the source
positions to the next multiple of :data:`BUCKET`. Padding changes nothing that training reads.
The extra decoder steps come after every real one and their outputs are cut off (the recurrence
is causal). The extra source positions are masked like any padding, so their attention weights
are exactly 0 and the context, the states and every gradient stay the same up to float rounding.
Inside the graphs the GRU runs as ``gru_cell`` on the same weights (plain kernels, see
``Decoder.rnn_step``). Shapes past :data:`MAX_GRAPHS` buckets run eagerly.

Used where it applies (:func:`graphs_apply`): a Bahdanau decoder with one GRU layer, on a CUDA
device, in float32, teacher forcing 1, one process. Everything else trains as before. With
``capture=False`` the padding runs without graphs on any device, which is how the CPU tests check
that it changes nothing.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from attnviz.devices import DeviceWarning
from attnviz.model import AttentionOutput, DecoderState, Memory, Recurrence

BUCKET = 8  # target steps and source positions are padded up to a multiple of this
MAX_GRAPHS = 64  # distinct bucket shapes captured at most; the rest run eagerly


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


def graphs_apply(model: nn.Module, device: torch.device, precision: str, teacher_forcing: float, world: int) -> str:
    """Why CUDA graphs do not apply to this training, or ``""`` where they do."""
    cfg = model.cfg
    reasons = {
        "the device is not a CUDA GPU": device.type != "cuda",
        "bf16 autocast": precision != "fp32",
        "the decoder is not Bahdanau's": cfg.style != "bahdanau",
        "the decoder RNN is not one GRU layer": cfg.cell != "gru" or cfg.dec_layers != 1,
        "scheduled sampling": teacher_forcing < 1.0,
        "several processes": world > 1,
    }
    return ", ".join(reason for reason, holds in reasons.items() if holds)


class _Step(nn.Module):
    """The recurrence as tensors in, tensors out: what ``make_graphed_callables`` captures."""

    def __init__(self, decoder: nn.Module, local: bool):
        super().__init__()
        self.decoder, self.local = decoder, local

    def forward(
        self, emb: Tensor, hidden: Tensor, values: Tensor, cache: Tensor, mask: Tensor, lengths: Tensor
    ) -> tuple[Tensor, ...]:
        rec = self.decoder.recur(emb, DecoderState(hidden), Memory(values, cache, mask, lengths), fused=True)
        att = rec.attention
        extra = (att.positions,) if self.local else ()  # local-m and local-p: p_t
        return (rec.outputs, att.context, att.weights, att.scores, rec.queries, *extra)


@dataclass
class RecurrenceGraphs:
    """Stands in for ``BahdanauDecoder.recur`` (set it as the decoder's ``recurrence``) while training.

    ``capture=False`` pads without capturing (any device): the padding's own check."""

    decoder: nn.Module
    capture: bool = True
    graphs: dict[tuple, nn.Module] = field(default_factory=dict)
    replays: int = 0  # recurrences run from a graph
    eager: int = 0  # recurrences run eagerly (evaluation, no gradient, past MAX_GRAPHS, or a failed capture)
    failed: str = ""  # why a capture failed; then the training goes on eagerly

    def __call__(self, emb: Tensor, state: DecoderState, memory: Memory) -> Recurrence:
        if not (torch.is_grad_enabled() and self.decoder.training) or torch.is_autocast_enabled():
            self.eager += 1
            return self.decoder.recur(emb, state, memory)
        T = emb.size(1)  # emb [B, T, E]
        S = memory.values.size(1)
        Tp = _round_up(T, BUCKET)
        Sp = max(S, min(_round_up(S, BUCKET), self.decoder.cfg.max_src_len))  # location scores stop there
        args = (
            F.pad(emb, (0, 0, 0, Tp - T)),  # [B, Tp, E] zero inputs after the last real step
            state.hidden,  # [1, B, H]
            F.pad(memory.values, (0, 0, 0, Sp - S)),  # [B, Sp, K]
            F.pad(memory.cache, (0, 0, 0, Sp - S)),  # [B, Sp, *]
            F.pad(memory.mask, (0, Sp - S), value=False),  # [B, Sp] padding masked
            memory.lengths,  # [B]
        )
        step = self._graph(args) if self.capture else _Step(self.decoder, self._local)
        if step is None:
            self.eager += 1
            return self.decoder.recur(emb, state, memory)
        outputs, context, weights, scores, queries, *extra = step(*args)
        self.replays += self.capture
        attention = AttentionOutput(
            context[:, :T], weights[:, :T, :S], scores[:, :T, :S], extra[0][:, :T] if extra else None
        )
        return Recurrence(outputs[:, :T], attention, queries[:, :T])

    def __deepcopy__(self, memo: dict) -> None:
        return None  # a copy of the model (attribution, benchmarks) runs the eager recurrence

    @property
    def _local(self) -> bool:
        return self.decoder.attention.is_local

    def _graph(self, args: tuple[Tensor, ...]) -> nn.Module | None:
        key = tuple(tuple(a.shape) for a in args)
        if key not in self.graphs:
            if len(self.graphs) >= MAX_GRAPHS or self.failed:
                return None
            samples = tuple(torch.zeros_like(a).requires_grad_(a.requires_grad) for a in args)
            samples[4].fill_(True)  # a mask with real tokens, as every batch has
            samples[5].fill_(args[4].size(1))
            with warnings.catch_warnings():
                # the warm-up runs on a side stream while this step's graph holds the parameters' gradient
                # nodes, made on the default stream: torch warns of a synchronisation, harmless here
                warnings.filterwarnings("ignore", message="The AccumulateGrad node's stream does not match")
                try:
                    self.graphs[key] = torch.cuda.make_graphed_callables(
                        _Step(self.decoder, self._local), samples, allow_unused_input=True
                    )
                except RuntimeError as e:  # e.g. another thread used the GPU during the capture
                    self.failed = " ".join(str(e).split())[:200]
                    warnings.warn(
                        f"CUDA graphs could not be captured ({self.failed}); training goes on without them "
                        "(--no-cuda-graphs, or cuda_graphs=False, says so from the start)",
                        DeviceWarning,
                        stacklevel=2,
                    )
                    return None
        return self.graphs[key]


def use_graphs(model: nn.Module, capture: bool = True) -> RecurrenceGraphs:
    """Make ``model``'s Bahdanau decoder run its teacher-forced recurrence through graphs; undo with
    :func:`drop_graphs` before the model is copied, saved or shared."""
    graphs = RecurrenceGraphs(model.decoder, capture)
    model.decoder.recurrence = graphs
    return graphs


def drop_graphs(model: nn.Module) -> None:
    """Back to the eager recurrence, freeing the graphs' memory."""
    model.decoder.recurrence = None
