"""Record how attention forms: the probes' alignment at the start, at geometric step intervals
(steps 1, 2, 3, 4, 6, 8, 12, 16, 24, ...: dense early, where alignments form) and at every
epoch end, kept in ``translator.history`` and so in every checkpoint saved during and after
training.

The probes are the training's probe sentence (else the data's example sentence) when the data
holds its reference, and :data:`TEST_PROBES` test pairs, with gold links where the task has them; each is
forced through its reference in one batched teacher-forced pass, so recording a point costs
one forward pass over a handful of short sentences. Each point holds the step, epoch, mean
training loss and accuracy since the previous point, the validation loss at epoch ends, and,
over the probes, the mean attention entropy and (with gold) the AER of the argmax links.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from attnviz.data import EOS, Corpus, Link, Pair
from attnviz.decoding import AlignmentHistory, HistoryProbe, Translator, argmax_links
from attnviz.evaluation import aer, mean_entropy
from attnviz.training.batches import pad_batch

TEST_PROBES = 4
MAX_PROBE_TOKENS = 40  # the probe sentence, per side
MAX_TEST_TOKENS = 24  # a test probe, per side: keeps the history a few hundred kB
MAX_HISTORY_BYTES = 384 * 1024  # the probes' float16 weights at most; points are thinned to fit
MAX_POINTS = 96


def geometric(step: int) -> bool:
    """Whether ``step`` is a geometric recording point: 1, 2, 3, 4, 6, 8, 12, ... (2^k and 1.5 * 2^k)."""
    if step < 1:
        return False
    top = 1 << (step.bit_length() - 1)  # the largest power of two <= step
    return step == top or (top >= 2 and step == top + top // 2)


def _fits(pair: Pair, limit: int) -> bool:
    return 0 < len(pair.source_tokens) <= limit and 0 < len(pair.target_tokens) <= limit


def choose_probes(corpus: Corpus, probe: str | None) -> list[tuple[str, Pair]]:
    """``(role, pair)``: the probe sentence's pair (role ``"probe"``: the first pair of the data whose
    source is ``probe``, else the data's example sentence) when the data holds it, then up to
    :data:`TEST_PROBES` test pairs of typical length (role ``"test"``), with gold links where the
    task has them."""
    everything = [*corpus.test, *corpus.valid, *corpus.train]
    chosen = []
    for wanted in dict.fromkeys(w.strip() for w in (probe or "", corpus.example()) if w and w.strip()):
        found = next((p for p in everything if p.source.strip() == wanted and _fits(p, MAX_PROBE_TOKENS)), None)
        if found is not None:
            chosen.append(("probe", found))
            break
    split = corpus.test or corpus.valid
    candidates = [p for p in split if p.has_gold] or split  # gold pairs where the task has them
    candidates = [p for p in candidates if _fits(p, MAX_TEST_TOKENS) and all(p is not q for _, q in chosen)]
    if candidates:
        lengths = sorted(len(p.source_tokens) for p in candidates)
        median = lengths[len(lengths) // 2]
        candidates.sort(key=lambda p: abs(len(p.source_tokens) - median))  # stable: typical length, data order
        chosen += [("test", p) for p in candidates[:TEST_PROBES]]
    return chosen


def _links(weights: np.ndarray, n_src: int, n_tgt: int) -> set[Link]:
    """The argmax links of ``weights`` (``[tgt, src]``, :func:`attnviz.decoding.argmax_links`) as
    :func:`attnviz.evaluation.alignment_links` reads an alignment: no link for the ``<eos>`` row, nor
    for a row whose argmax is the ``<eos>`` column."""
    return {(s, t) for s, t in argmax_links(weights[:n_tgt], every_row=True) if s < n_src}


class HistoryRecorder:
    """Records the alignment history of one training into ``translator.history``."""

    def __init__(self, translator: Translator, chosen: list[tuple[str, Pair]], steps_per_epoch: int, resume: bool):
        self.translator = translator
        self.steps_per_epoch = max(steps_per_epoch, 1)
        pairs = [p for _, p in chosen]
        probes = [
            HistoryProbe(role, [*p.source_tokens, EOS], [*p.target_tokens, EOS], p.sure, p.possible)
            for role, p in chosen
        ]
        kept = translator.history if resume else None
        if kept is None or [p.to_dict() for p in kept.probes] != [p.to_dict() for p in probes]:
            kept = AlignmentHistory(probes)
        translator.history = kept
        self.history = kept
        src_vocab, tgt_vocab = translator.src_vocab, translator.tgt_vocab
        sources = [src_vocab.encode(p.source_tokens, eos=True) for p in pairs]
        targets = [tgt_vocab.encode(p.target_tokens, bos=True, eos=True) for p in pairs]
        self.batch = pad_batch([(s, t, None) for s, t in zip(sources, targets, strict=True)])
        self.loss = self.accuracy = self.tokens = 0.0

    @classmethod
    def start(
        cls, translator: Translator, corpus: Corpus, probe: str | None, steps_per_epoch: int, resume: bool
    ) -> HistoryRecorder | None:
        """A recorder for this training, or None when the data has no pair to probe with."""
        chosen = choose_probes(corpus, probe)
        return cls(translator, chosen, steps_per_epoch, resume) if chosen else None

    def add_step(self, loss_sum: float, correct: int, tokens: int) -> None:
        """Count one optimiser step's summed token loss and correct predictions."""
        self.loss, self.accuracy, self.tokens = self.loss + loss_sum, self.accuracy + correct, self.tokens + tokens

    @torch.no_grad()
    def record(
        self,
        model: nn.Module,
        device: torch.device,
        kind: str,
        step: int,
        epoch: int,
        seconds: float,
        valid_loss: float | None = None,
    ) -> None:
        """Add a point: the probes' attention now, forced through their references."""
        if self.history.points and self.history.points[-1]["step"] == step and kind != "epoch":
            return  # already recorded at this step
        was_training = model.training
        model.eval()
        src, lengths, tgt = (x.to(device) for x in self.batch)
        weights = model(src, lengths, tgt[:, :-1], 1.0).attention.weights.float().cpu().numpy()  # [B, T, S]
        model.train(was_training)
        maps = [weights[k, : p.shape[0], : p.shape[1]] for k, p in enumerate(self.history.probes)]
        gold = [(m, p) for m, p in zip(maps, self.history.probes, strict=True) if p.sure is not None]
        alignment_error = None
        if gold:
            hard = [_links(m, len(p.source_tokens) - 1, len(p.target_tokens) - 1) for m, p in gold]
            alignment_error = aer(hard, [p.sure for _, p in gold], [p.possible or p.sure for _, p in gold])
        replaces = bool(self.history.points) and self.history.points[-1]["step"] == step  # an epoch end
        counted = self.tokens > 0
        point = {
            "kind": kind,
            "step": step,
            "epoch": epoch,
            "epochs": round(step / self.steps_per_epoch, 4),
            "loss": _finite(self.loss / self.tokens) if counted else None,
            "accuracy": self.accuracy / self.tokens if counted else None,
            "valid_loss": _finite(valid_loss),
            "aer": alignment_error,
            "entropy": mean_entropy(maps),
            "seconds": round(seconds, 2),
        }
        if replaces:  # the epoch end of a geometric step: one point, with the loss counted up to it
            last = self.history.points[-1]
            if not counted:
                point["loss"], point["accuracy"] = last["loss"], last["accuracy"]
            self.history.keep(list(range(len(self.history) - 1)))
        self.history.append(point, maps)
        self.loss = self.accuracy = self.tokens = 0.0
        self._thin()

    def _thin(self) -> None:
        """Halve the points between the first and the last while there are more than fit."""
        per_point = max(sum(p.shape[0] * p.shape[1] for p in self.history.probes) * 2, 1)  # float16
        limit = max(8, min(MAX_POINTS, MAX_HISTORY_BYTES // per_point))
        while len(self.history) > limit:
            n = len(self.history)
            self.history.keep([0, *range(2, n - 1, 2), n - 1])


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None
