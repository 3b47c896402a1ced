"""The state of one training, carried from step to step and from epoch to epoch (:class:`TrainRun`),
and :func:`start_run`, which makes it: seed, device, validation batches, optimiser."""

from __future__ import annotations

import collections
import math
import random
import time
from dataclasses import dataclass, field

import torch
from torch import nn

from attnviz.data import Corpus
from attnviz.decoding import Translator
from attnviz.devices import describe
from attnviz.training.batches import make_batches
from attnviz.training.config import Progress, TrainConfig
from attnviz.training.distributed import Batch, SingleProcess
from attnviz.training.graphs import graphs_apply, use_graphs
from attnviz.training.history import HistoryRecorder
from attnviz.training.resume_state import ResumeState, restore_optimizer


@dataclass
class TrainRun:
    """What one training carries from step to step and from epoch to epoch."""

    translator: Translator
    cfg: TrainConfig
    group: SingleProcess
    model: nn.Module
    trained: nn.Module  # the DDP wrapper of model when distributed, else model itself
    device: torch.device
    precision: str
    hardware: str
    valid_batches: list[Batch]
    optimizer: torch.optim.Optimizer
    total_steps: int
    start: float  # time.perf_counter() when the training began (earlier when resumed)
    step: int = 0  # optimiser steps so far
    lr: float = 0.0  # the learning rate of the last optimiser step
    bad_epochs: int = 0  # epochs since the best validation loss
    best_state: dict | None = None  # the weights of the best epoch of this run
    snapshots: collections.deque = field(default_factory=collections.deque)  # epoch-end weights to average
    recorder: HistoryRecorder | None = None  # the alignment history (rank 0, cfg.record_history)
    rng: random.Random | None = None  # the batch shuffler (fit's), whose state a resume carries on

    @property
    def guided(self) -> bool:
        return self.cfg.guided_weight > 0

    def report(self, kind: str, epoch: int, sums: Totals, steps_left: int, **valid: float | None) -> Progress:
        """The progress report of ``sums``, one step's or one epoch's (``valid``: its ``valid_loss``
        and ``valid_accuracy``)."""
        elapsed = time.perf_counter() - self.start
        tokens = max(sums.tokens, 1)
        return Progress(
            kind,
            self.step,
            self.total_steps,
            epoch,
            self.cfg.epochs,
            loss=sums.loss / tokens,
            accuracy=sums.correct / tokens,
            seconds=elapsed,
            eta_seconds=elapsed / self.step * steps_left,
            lr=self.lr,
            hardware=self.hardware,
            align_loss=sums.align / tokens if self.guided else None,
            **valid,
        )


@dataclass
class Totals:
    """Sums over one step or the steps of one epoch, for the whole batch of each (all ranks)."""

    loss: float = 0.0  # token loss, summed over target tokens
    align: float = 0.0  # guided alignment loss, weighted by target tokens as the loss
    correct: int = 0
    tokens: int = 0

    def add(self, other: Totals) -> None:
        self.loss, self.align = self.loss + other.loss, self.align + other.align
        self.correct, self.tokens = self.correct + other.correct, self.tokens + other.tokens


def start_run(translator: Translator, corpus: Corpus, cfg: TrainConfig, group: SingleProcess, resume: dict) -> TrainRun:
    """Seed, place the model on the device ``cfg`` asks for, batch the validation split and make
    the optimiser; ``resume`` (a ``translator.meta["progress"]`` record) sets the step count and clock, and
    its ``state`` (a :class:`~attnviz.training.resume_state.ResumeState`, when there is one) the weights,
    the optimiser, the random state, the best epoch's and the averaged epochs' weights as they were."""
    if cfg.num_threads:
        torch.set_num_threads(cfg.num_threads)
    torch.manual_seed(cfg.seed + group.rank)  # ranks draw different dropout masks
    state: ResumeState | None = resume.get("state")
    if state is not None:
        translator.model.load_state_dict(state.last)  # a stopped run's checkpoint keeps its best epoch
        if state.torch_rng is not None and group.world == 1:  # the dropout masks to come
            torch.set_rng_state(state.torch_rng)
    device, precision = cfg.hardware()
    device = group.place(device)
    hardware = group.describe(describe(device))
    model = translator.model.to(device)
    trained = group.wrap(model)  # the DDP wrapper when distributed
    src_vocab, tgt_vocab = translator.src_vocab, translator.tgt_vocab
    valid_batches = make_batches(corpus.valid, src_vocab, tgt_vocab, cfg.batch_size, None) if corpus.valid else []
    steps_per_epoch = math.ceil(len(corpus.train) / cfg.batch_size)
    total_steps = steps_per_epoch * cfg.epochs
    if cfg.max_steps:
        total_steps = min(total_steps, cfg.max_steps)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr, fused=device.type == "cuda")  # one kernel a step
    if state is not None:
        restore_optimizer(optimizer, state.optimizer)
    if cfg.cuda_graphs and not graphs_apply(model, device, precision, cfg.teacher_forcing, group.world):
        use_graphs(model)
        hardware += ", CUDA graphs"  # the progress reports and the checkpoint say so
    start = time.perf_counter() - float(resume.get("seconds", 0.0))
    return TrainRun(
        translator,
        cfg,
        group,
        model,
        trained,
        device,
        precision,
        hardware,
        valid_batches,
        optimizer,
        total_steps,
        start,
        step=int(resume.get("step", 0)),
        lr=optimizer.param_groups[0]["lr"],
        bad_epochs=int(resume.get("bad_epochs", 0)),
        best_state=_on(state.best, device) if state is not None and state.best is not None else None,
        snapshots=collections.deque(
            [_on(s, device) for s in state.snapshots] if state is not None else [], maxlen=max(cfg.average_last, 1)
        ),
    )


def _on(weights: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    return {name: t.to(device) for name, t in weights.items()}
