"""Training: build a fresh model for a corpus, then ``fit`` it with progress callbacks.

The loop knows nothing about the model's internals. It reports through a callback (the CLI
draws a tqdm bar from it, the app a live chart) and checks ``should_stop`` between steps, so
another thread can stop it.
"""

from __future__ import annotations

import collections
import copy
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import torch
from torch import Tensor, nn

from attnviz.data import PAD_ID, Corpus, Link, Pair, Vocab
from attnviz.decoding import Alignment, Translator
from attnviz.devices import PRECISIONS, autocast, check_device_name, describe, pick_device, training_precision
from attnviz.errors import ConfigError, DataError, InputError
from attnviz.model import ModelConfig, build_model
from attnviz.training.distributed import Batch, SingleProcess
from attnviz.training.guided import guided_alignment_loss, link_grid, reference_rows
from attnviz.training.loss import smoothed_cross_entropy

SCHEDULES = ("constant", "linear")


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
    guided_weight: float = (
        0.0  # weight of the guided alignment loss (attnviz.training.guided); 0: off, >0: fit needs links
    )

    def __post_init__(self) -> None:
        checks = {
            "epochs": 1 <= self.epochs <= 1000,
            "batch_size": 1 <= self.batch_size <= 4096,
            "lr": 0 < self.lr <= 1,
            "clip": self.clip > 0,
            "teacher_forcing": 0 <= self.teacher_forcing <= 1,
            "label_smoothing": 0 <= self.label_smoothing < 1,
            "lr_decay": 0 < self.lr_decay <= 1,
            "schedule": self.schedule in SCHEDULES,
            "lr_floor": 0 <= self.lr_floor <= 1,
            "max_seconds": self.max_seconds is None or self.max_seconds > 0,
            "average_last": 0 <= self.average_last <= 100,
            "precision": self.precision in PRECISIONS,
            "guided_weight": 0 <= self.guided_weight <= 10,
        }
        bad = [k for k, ok in checks.items() if not ok]
        if bad:
            raise ConfigError(f"training setting out of range: {', '.join(f'{k}={getattr(self, k)}' for k in bad)}")
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

    def as_row(self) -> dict:
        """The report without its probe; without guidance also without ``align_loss``, so unguided
        histories read as before."""
        return {k: v for k, v in asdict(self).items() if k != "probe" and not (k == "align_loss" and v is None)}


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


def build_translator(
    corpus: Corpus,
    min_freq: int = 1,
    max_vocab: int | None = None,
    seed: int = 0,
    **model_options,
) -> Translator:
    """A fresh (untrained) model with vocabularies built from ``corpus.train``."""
    if not corpus.train:
        raise DataError(f"{corpus.name}: the training split is empty; nothing to train on")
    src_vocab = Vocab.build((p.source_tokens for p in corpus.train), min_freq, max_vocab)
    tgt_vocab = Vocab.build((p.target_tokens for p in corpus.train), min_freq, max_vocab)
    longest = max(len(p.source_tokens) for p in corpus.train) + 1
    model_options.setdefault("max_src_len", max(100, longest))
    cfg = ModelConfig(src_vocab_size=len(src_vocab), tgt_vocab_size=len(tgt_vocab), **model_options)
    meta = {"task": corpus.name, "example": corpus.example(known=src_vocab.__contains__)}
    return Translator(
        build_model(cfg, seed), src_vocab, tgt_vocab, corpus.source_tokenizer, corpus.target_tokenizer, meta
    )


def make_batches(
    pairs: list[Pair],
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    batch_size: int,
    rng: random.Random | None,
    links: Sequence[Sequence[Link]] | None = None,
) -> list[Batch]:
    """Length-bucketed padded batches ``(src [B, S], lengths [B], tgt [B, T+1])``.

    ``tgt`` is ``<bos> y_1 ... y_n <eos>`` padded; the model reads ``tgt[:, :-1]`` and is
    scored on ``tgt[:, 1:]``. With ``rng`` the order is shuffled (reproducibly). Batches group
    pairs of similar source length (about 4% source padding on Multi30k, 31% target padding,
    where the output layer does not run: see ``_loss_and_accuracy``). Grouping by target length
    instead (3% target padding, 21% source padding) ran de-en epochs no faster than this (165
    vs 168 s) and learned slightly less per step; benchmarks/README.md has the figures.

    ``links`` (guided training: one list per pair, ``(source_index, target_index)`` over its
    tokens) adds a fourth item, the links as a boolean grid ``[B, T, S]`` (see
    :func:`attnviz.training.guided.link_grid`): each pair's links travel with its ids through the
    shuffles and the bucketing. Grid row ``t`` is the step that writes ``tgt[:, t + 1]``, target
    token ``t``; no link reaches the ``<eos>`` of either side.
    """
    if links is not None and len(links) != len(pairs):
        raise InputError(f"{len(links)} link lists for {len(pairs)} pairs; give one list per training pair, in order")
    encoded = [(src_vocab.encode(p.source_tokens, eos=True), tgt_vocab.encode(p.target_tokens, bos=True, eos=True),
                None if links is None else _checked_links(k, p, links[k]))
               for k, p in enumerate(pairs)]  # fmt: skip
    order = list(range(len(encoded)))
    if rng is not None:
        rng.shuffle(order)
    pool = 50 * batch_size  # sort inside pools so batches hold similar lengths
    batches = []
    for start in range(0, len(order), pool):
        chunk = sorted(order[start : start + pool], key=lambda i: len(encoded[i][0]))
        batches.extend(chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size))
    if rng is not None:
        rng.shuffle(batches)
    return [_pad([encoded[i] for i in batch]) for batch in batches]


def _checked_links(k: int, pair: Pair, links: Sequence[Link]) -> list[Link]:
    """The links of training pair ``k`` (0-based), refused if one falls outside its tokens."""
    n_src, n_tgt = len(pair.source_tokens), len(pair.target_tokens)
    for i, j in links:
        if not (0 <= i < n_src and 0 <= j < n_tgt):
            raise InputError(
                f"training pair {k + 1} ({pair.source!r}): link {i}-{j} is outside its {n_src} source and {n_tgt} "
                "target tokens; links index the pair's tokens (expand word links with "
                "attnviz.training.guided.piece_links)"
            )
    return list(links)


def _pad(items: list[tuple[list[int], list[int], list[Link] | None]]) -> Batch:
    lengths = torch.tensor([len(s) for s, _, _ in items])
    src = torch.full((len(items), int(lengths.max())), PAD_ID)  # [B, S]
    tgt = torch.full((len(items), max(len(t) for _, t, _ in items)), PAD_ID)  # [B, T+1]
    for row, (s, t, _) in enumerate(items):
        src[row, : len(s)] = torch.tensor(s)
        tgt[row, : len(t)] = torch.tensor(t)
    if items[0][2] is None:
        return src, lengths, tgt
    return src, lengths, tgt, link_grid([links for _, _, links in items], tgt.size(1) - 1, src.size(1))  # [B, T, S]


def _loss_and_accuracy(
    model, batch, device, smoothing: float, teacher_forcing: float
) -> tuple[Tensor, int, int, Tensor | None]:
    """Mean token loss (label-smoothed), correct argmax predictions, real target tokens and, for a
    batch with links (see ``make_batches``), the guided alignment loss of its attention."""
    src, lengths, tgt, *links = (x.to(device) for x in batch)
    scored = tgt[:, 1:] != PAD_ID  # [B, T] real target tokens: the output layer runs only there
    gold = tgt[:, 1:][scored]  # [N]
    out = model(src, lengths, tgt[:, :-1], teacher_forcing, scored=scored)  # logits [N, V], attention [B, T, S]
    loss, predicted = smoothed_cross_entropy(out.logits.float(), gold, smoothing, PAD_ID)  # bf16 logits: loss in fp32
    align = None
    if links:
        reference, rows = reference_rows(links[0])  # [B, T, S], [B, T]
        align = guided_alignment_loss(out.attention.weights.float(), reference, rows)
    return loss, int((predicted == gold).sum()), gold.numel(), align


@torch.no_grad()
def evaluate_loss(model: nn.Module, batches, device, group: SingleProcess | None = None) -> tuple[float, float]:
    """Mean token loss and accuracy over batches (teacher-forced, no dropout, no smoothing, fp32);
    with a distributed ``group`` each rank evaluates its part and the totals are summed."""
    group = group or SingleProcess()
    was_training = model.training
    model.eval()
    total, correct, count = 0.0, 0, 0
    for batch in group.part(batches):
        loss, c, n, _ = _loss_and_accuracy(model, batch, device, 0.0, 1.0)
        total, correct, count = total + float(loss) * n, correct + c, count + n
    total, correct, count = group.sum(total, correct, count)
    model.train(was_training)
    return total / max(count, 1), correct / max(count, 1)


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _linear(cfg: TrainConfig, step: int, total_steps: int, seconds: float) -> float:
    """The linear schedule's factor after ``step`` steps and ``seconds`` of training: progress is
    steps done or, with a time budget, time spent, whichever is further along, so a budget cut
    short by a slow machine still ends decayed."""
    done = step / max(total_steps, 1)
    if cfg.max_seconds:
        done = max(done, seconds / cfg.max_seconds)
    return max(cfg.lr_floor, 1.0 - (1.0 - cfg.lr_floor) * done)


def _keep_average_if_better(model: nn.Module, snapshots, valid_batches, device, result: TrainResult, group) -> None:
    """Checkpoint averaging: load the mean of the epoch-end weights in ``snapshots`` if its
    validation loss beats the best single epoch's (recorded in ``result``)."""
    kept = {k: v.clone() for k, v in model.state_dict().items()}
    mean = {k: torch.stack([s[k] for s in snapshots]).mean(0).to(kept[k].dtype) for k in kept}
    model.load_state_dict(mean)
    loss, _ = evaluate_loss(model, valid_batches, device, group)
    if loss < result.best_valid_loss:
        result.best_valid_loss, result.averaged = loss, len(snapshots)
    else:
        model.load_state_dict(kept)


def fit(
    translator: Translator,
    corpus: Corpus,
    cfg: TrainConfig,
    callback: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_epoch_end: Callable[[Translator, TrainResult], None] | None = None,
    resume: dict | None = None,
    group: SingleProcess | None = None,
    links: Sequence[Sequence[Link]] | None = None,
) -> TrainResult:
    """Train ``translator.model`` in place on ``corpus.train``; keep the best validation epoch.

    After each epoch ``translator.meta["progress"]`` records where training stands and
    ``on_epoch_end`` can save a checkpoint. ``resume`` (that record, read back from such a
    checkpoint) continues from the next epoch with the saved weights: same epoch count,
    schedule position and time budget; Adam's moments start afresh, and the best weights are
    those of the saved epoch or a later, better one.

    ``group`` (from :func:`attnviz.training.distributed.join_torchrun`) trains this process's shard of every
    batch with DistributedDataParallel; only its rank 0 calls ``callback`` and ``on_epoch_end``.

    With ``cfg.guided_weight`` > 0 the loss of a batch is ``L_translation + guided_weight *
    L_align`` (:mod:`attnviz.training.guided`), ``links`` holding the reference links of every pair of
    ``corpus.train``, in order, over its tokens (:func:`attnviz.training.guided_links.training_links`
    makes them); the progress reports then carry ``align_loss``.
    """
    group = group or SingleProcess()
    guided = cfg.guided_weight > 0
    if guided and links is None:
        raise ConfigError(
            f"guided_weight={cfg.guided_weight} needs the links of every training pair: pass links= to fit, "
            'or give the recipe a guided field, e.g. "guided": {"weight": 0.3, "links": "eflomal"}'
        )
    if cfg.num_threads:
        torch.set_num_threads(cfg.num_threads)
    torch.manual_seed(cfg.seed + group.rank)  # ranks draw different dropout masks
    resume = resume or {}
    first_epoch, step = int(resume.get("epoch", 0)) + 1, int(resume.get("step", 0))
    rng = random.Random(cfg.seed if first_epoch == 1 else cfg.seed * 1000 + first_epoch)
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
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    start = time.perf_counter() - float(resume.get("seconds", 0.0))
    lr = optimizer.param_groups[0]["lr"]
    result, best_state, bad_epochs = TrainResult(), None, int(resume.get("bad_epochs", 0))
    snapshots: collections.deque[dict[str, Tensor]] = collections.deque(maxlen=max(cfg.average_last, 1))
    result.history = list(resume.get("history", []))
    result.best_valid_loss = float(resume.get("best_valid_loss") or math.inf)
    for epoch in range(first_epoch, cfg.epochs + 1):
        model.train()
        epoch_loss, epoch_align, epoch_correct, epoch_tokens = 0.0, 0.0, 0, 0
        for batch in make_batches(corpus.train, src_vocab, tgt_vocab, cfg.batch_size, rng, links if guided else None):
            # the same on every rank: ranks stop at the same step and use the same rate
            asked, spent = group.agree(bool(should_stop and should_stop()), time.perf_counter() - start)
            if asked or (cfg.max_steps and step >= cfg.max_steps):
                result.stopped = asked
                break
            if cfg.max_seconds and spent >= cfg.max_seconds:
                result.out_of_time = True
                break
            if cfg.schedule == "linear":
                for param_group in optimizer.param_groups:
                    param_group["lr"] = cfg.lr * _linear(cfg, step, total_steps, spent)
            lr = optimizer.param_groups[0]["lr"]  # the rate this step uses
            shard, weight = group.shard(batch)
            with autocast(device, precision):
                loss, correct, n, align = _loss_and_accuracy(
                    trained, shard, device, cfg.label_smoothing, cfg.teacher_forcing
                )
            total = loss if align is None else loss + cfg.guided_weight * align
            optimizer.zero_grad(set_to_none=True)
            (total * weight).backward()
            nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
            optimizer.step()
            step += 1
            align_sum = 0.0 if align is None else align.item() * n  # weighted by target tokens, as the loss
            loss_sum, align_sum, correct, n = group.sum(loss.item() * n, align_sum, correct, n)  # of the whole batch
            epoch_loss, epoch_correct, epoch_tokens = epoch_loss + loss_sum, epoch_correct + correct, epoch_tokens + n
            epoch_align += align_sum
            if callback and group.is_main:
                elapsed = time.perf_counter() - start
                callback(Progress("step", step, total_steps, epoch, cfg.epochs, loss_sum / max(n, 1),
                                  correct / max(n, 1), elapsed, elapsed / step * (total_steps - step), lr=lr,
                                  hardware=hardware, align_loss=align_sum / max(n, 1) if guided else None))  # fmt: skip
        if epoch_tokens == 0:
            break
        if cfg.average_last > 1:
            snapshots.append({k: v.detach().float().clone() for k, v in model.state_dict().items()})
        valid_loss, valid_acc = evaluate_loss(model, valid_batches, device, group) if valid_batches else (None, None)
        score = valid_loss if valid_loss is not None else epoch_loss / epoch_tokens
        if score < result.best_valid_loss:
            result.best_valid_loss, bad_epochs = score, 0
            best_state = copy.deepcopy(model.state_dict())
        else:
            bad_epochs += 1
            for param_group in optimizer.param_groups:
                param_group["lr"] *= cfg.lr_decay
        elapsed = time.perf_counter() - start
        report = Progress("epoch", step, total_steps, epoch, cfg.epochs, epoch_loss / epoch_tokens,
                          epoch_correct / epoch_tokens, elapsed, elapsed / step * max(total_steps - step, 0),
                          valid_loss, valid_acc, lr=lr, hardware=hardware,
                          align_loss=epoch_align / epoch_tokens if guided else None)  # fmt: skip
        if cfg.probe and group.is_main:
            model.eval()
            report.probe = translator.translate(cfg.probe)
        result.history.append(report.as_row())
        result.epochs_run = epoch
        if callback and group.is_main:
            callback(report)
        translator.meta["progress"] = {"epoch": epoch, "step": step, "seconds": round(elapsed, 1),
                                       "best_valid_loss": _finite(result.best_valid_loss), "bad_epochs": bad_epochs,
                                       "history": result.history}  # fmt: skip
        if on_epoch_end and group.is_main:
            on_epoch_end(translator, result)
        if result.stopped or (cfg.max_steps and step >= cfg.max_steps):
            break
        if cfg.patience is not None and bad_epochs >= cfg.patience:
            result.early_stopped = True
            break
        if result.out_of_time:
            break
    if best_state is not None:
        model.load_state_dict(best_state)
    if len(snapshots) > 1 and valid_batches and not result.stopped:
        _keep_average_if_better(model, snapshots, valid_batches, device, result, group)
    model.eval()
    result.seconds = time.perf_counter() - start
    if not result.stopped:  # a stopped training keeps its record, so it can be resumed later
        translator.meta.pop("progress", None)
    translator.meta.update(
        {
            "train_seconds": round(result.seconds, 1),
            "epochs_run": result.epochs_run,
            "recipe": cfg.to_dict(),
            "averaged_epochs": result.averaged,
            "device": str(device),
            "hardware": hardware,
            "precision": precision,
        }
    )
    return result
