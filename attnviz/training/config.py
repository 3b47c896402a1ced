"""How to train (``TrainConfig``, stored in the checkpoint as the recipe), what a training reports
after each step and epoch (``Progress``) and what it returns (``TrainResult``)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields

import torch

from attnviz.decoding import Alignment
from attnviz.devices import PRECISIONS, check_device_name, pick_device, training_precision
from attnviz.errors import ConfigError, check_field_types, counted

SCHEDULES = ("constant", "linear")
MAX_EPOCHS = 1000


@dataclass
class TrainConfig:
    """How to train (stored in the checkpoint as the recipe, with the data spec)."""

    epochs: int = 10
    batch_size: int = 64
    lr: float = 1e-3
    clip: float = 1.0  # gradient norm clipping
    teacher_forcing: float = 1.0  # probability of feeding the gold token (1.0 allows fast paths)
    label_smoothing: float = 0.0
    patience: int | None = 3  # early stopping: epochs without a better validation loss
    lr_decay: float = 1.0  # multiply the learning rate by this after each epoch without improvement
    schedule: str = "constant"  # or "linear": falls linearly to lr * lr_floor over all steps (lr_decay unused)
    lr_floor: float = 0.05
    max_seconds: float | None = None  # time budget: stop mid-epoch when spent (that epoch is still validated)
    seed: int = 0
    max_steps: int | None = None  # stop after this many optimiser steps in total
    probe: str | None = None  # a source sentence whose alignment is reported after each epoch
    device: str = "cpu"  # cpu, cuda, cuda:N, mps or auto (attnviz.devices.available_devices())
    precision: str = "fp32"  # "bf16": autocast mixed precision; "auto": bf16 where native (see attnviz.devices)
    num_threads: int | None = None  # torch threads for this (training) thread
    average_last: int = 0  # also try the mean of the weights at the last N epoch ends (checkpoint averaging)
    record_history: bool = True  # record the probes' alignment history (attnviz.training.history)
    cuda_graphs: bool = True  # replay the decoder recurrence as CUDA graphs where it applies (training.graphs)
    guided_weight: float = (
        0.0  # weight of the guided alignment loss (attnviz.training.guided); 0: off, >0: fit needs links
    )

    def __post_init__(self) -> None:
        check_field_types(self)
        checks = {  # setting: (whether it holds, what it may be)
            "epochs": (1 <= self.epochs <= MAX_EPOCHS, f"1 to {MAX_EPOCHS}"),
            "batch_size": (1 <= self.batch_size <= 4096, "1 to 4096"),
            "lr": (0 < self.lr <= 1, "above 0 and at most 1, e.g. 0.001"),
            "clip": (self.clip > 0, "above 0, e.g. 1.0"),
            "teacher_forcing": (0 <= self.teacher_forcing <= 1, "0 to 1"),
            "label_smoothing": (0 <= self.label_smoothing < 1, "0 or more and below 1, e.g. 0.1"),
            "lr_decay": (0 < self.lr_decay <= 1, "above 0 and at most 1 (1: no decay)"),
            "schedule": (self.schedule in SCHEDULES, " or ".join(SCHEDULES)),
            "lr_floor": (0 <= self.lr_floor <= 1, "0 to 1"),
            "max_seconds": (self.max_seconds is None or self.max_seconds > 0, "above 0, or null for no budget"),
            "average_last": (0 <= self.average_last <= 100, "0 to 100"),
            "precision": (self.precision in PRECISIONS, " or ".join(PRECISIONS)),
            "guided_weight": (0 <= self.guided_weight <= 10, "0 to 10"),
        }
        bad = [f"{k}={getattr(self, k)!r} (give {allowed})" for k, (ok, allowed) in checks.items() if not ok]
        if bad:
            raise ConfigError(f"training settings out of range: {'; '.join(bad)}")
        check_device_name(self.device)

    def hardware(self) -> tuple[torch.device, str]:
        """The device and precision (``"fp32"`` or ``"bf16"``) this machine trains with; raises
        ConfigError when it lacks what was asked for (a GPU, bf16 support)."""
        device = pick_device(self.device)
        return device, training_precision(self.precision, device)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Progress:
    """One report to the callback: after a step (``kind="step"``) or an epoch (``"epoch"``)."""

    kind: str
    step: int
    total_steps: int
    epoch: int
    epochs: int
    loss: float
    accuracy: float
    seconds: float
    eta_seconds: float
    valid_loss: float | None = None
    valid_accuracy: float | None = None
    lr: float | None = None  # the learning rate of the last optimiser step
    align_loss: float | None = None  # the guided alignment loss (guided training only)
    hardware: str | None = None  # what the training runs on, e.g. "AMD EPYC CPU, 1 thread"
    probe: Alignment | None = None
    history: dict | None = None  # the alignment history as plain data, on reports that added a point

    def as_row(self) -> dict:
        """The report without its probe and history; without guidance also without ``align_loss``,
        so unguided histories read as before."""
        values = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("probe", "history")}
        return {k: v for k, v in values.items() if not (k == "align_loss" and v is None)}


@dataclass
class TrainResult:
    history: list[dict] = field(default_factory=list)  # one row per epoch
    best_valid_loss: float = math.inf
    epochs_run: int = 0
    stopped: bool = False  # by should_stop
    early_stopped: bool = False
    out_of_time: bool = False  # stopped by cfg.max_seconds
    seconds: float = 0.0
    averaged: int = 0  # epochs whose mean weights were kept (0: the best single epoch was kept)
    best_epoch: int = 0  # the epoch of the best validation (else training) loss so far
    resume_state: object | None = None  # the last epoch end's ResumeState (attnviz.training.resume_state)


def ending(result: TrainResult, cfg: TrainConfig, validated: bool, kept: int) -> str | None:
    """Why a training ran fewer epochs than ``cfg`` asked and which weights its model keeps, in words
    (stored as ``meta["ending"]``; None when it ran every epoch and keeps the last one's weights).
    ``validated``: whether the epochs were judged by a validation split (else by the training loss);
    ``kept``: the epoch whose weights the model holds (unless ``result.averaged``)."""
    n, of = result.epochs_run, cfg.epochs
    loss = "validation loss" if validated else "training loss"
    if result.stopped:
        why = None  # said by whoever stopped it (the Train page, the CLI's stop line)
    elif result.early_stopped:
        why = f"stopped early after epoch {n} of {of}: its {loss} had not improved for {counted(cfg.patience, 'epoch')}"
        why += "" if validated else " (there is no validation split)"
    elif result.out_of_time:
        why = f"stopped in epoch {n} of {of} at its time budget of {cfg.max_seconds:g} s"
    elif n < of and cfg.max_steps:
        why = f"stopped in epoch {n} of {of} at its {cfg.max_steps:,} steps"
    else:
        why = None
    if result.averaged:
        what = f"the model is the mean of its last {result.averaged} epochs' weights"
    elif 0 < kept < n:
        what = f"the model keeps epoch {kept}'s weights, its best {loss}"
    elif 0 < result.best_epoch < kept:  # resumed, and no later epoch beat one from before the resume
        what = (
            f"the model keeps epoch {kept}'s weights: epoch {result.best_epoch}'s {loss} was lower, but a "
            "resumed training starts from its last saved epoch and had not kept that one"
        )
    else:
        what = None
    if why is None and what is None:
        return None
    text = "; ".join(part for part in (why, what) if part)
    return text[0].upper() + text[1:] + "."
