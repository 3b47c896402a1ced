"""Training: build a fresh model for a corpus, then ``fit`` it with progress callbacks.

``fit`` composes :func:`~attnviz.training.run.start_run` (the state of the run), :func:`run_epoch`
(a :func:`train_step` per batch), :func:`end_epoch` and :func:`finish_run`. The loop knows nothing
about the model's internals. It reports through a callback (the CLI draws a tqdm bar from it, the
app a live chart) and checks ``should_stop`` between steps, so another thread can stop it.
"""

from __future__ import annotations

import copy
import math
import random
import time
from collections.abc import Callable, Sequence

import torch
from torch import Tensor, nn

from attnviz.data import PAD_ID, Corpus, Link, Vocab
from attnviz.decoding import Translator
from attnviz.devices import autocast
from attnviz.errors import ConfigError, DataError
from attnviz.model import ModelConfig, build_model
from attnviz.training.batches import make_batches
from attnviz.training.config import Progress, TrainConfig, TrainResult, ending
from attnviz.training.distributed import Batch, SingleProcess
from attnviz.training.graphs import drop_graphs
from attnviz.training.guided import guided_alignment_loss, reference_rows
from attnviz.training.heap import reuse_freed_memory
from attnviz.training.history import HistoryRecorder, geometric
from attnviz.training.loss import smoothed_cross_entropy
from attnviz.training.resume_state import ResumeState
from attnviz.training.run import Totals, TrainRun, start_run


def build_translator(
    corpus: Corpus,
    min_freq: int = 1,
    max_vocab: int | None = None,
    seed: int = 0,
    **model_options,
) -> Translator:
    """A fresh (untrained) model with vocabularies built from ``corpus.train``."""
    if not corpus.train:
        raise DataError(
            f"{corpus.name}: the training split is empty; nothing to train on: check that the data holds pairs and "
            "that its size and length filters (n_train, min_len, max_len in a recipe's data_options) leave some"
        )
    src_vocab = Vocab.build((p.source_tokens for p in corpus.train), min_freq, max_vocab)
    tgt_vocab = Vocab.build((p.target_tokens for p in corpus.train), min_freq, max_vocab)
    longest = max(len(p.source_tokens) for p in corpus.train) + 1
    model_options.setdefault("max_src_len", max(100, longest))
    if model_options.get("score") == "location" and model_options["max_src_len"] < longest:
        raise ConfigError(  # location attention scores a fixed number of positions: it would fail mid-training
            f"location attention reads at most max_src_len ({model_options['max_src_len']}) source tokens, but the "
            f"longest training source has {longest} with <eos>; raise max_src_len to {longest} or more, or leave it out"
        )
    cfg = ModelConfig(src_vocab_size=len(src_vocab), tgt_vocab_size=len(tgt_vocab), **model_options)
    meta = {"task": corpus.name, "example": corpus.example(known=src_vocab.__contains__)}
    return Translator(
        build_model(cfg, seed), src_vocab, tgt_vocab, corpus.source_tokenizer, corpus.target_tokenizer, meta
    )


def _loss_and_accuracy(
    model: nn.Module, batch: Batch, device: torch.device | str, smoothing: float, teacher_forcing: float
) -> tuple[Tensor, int, int, Tensor | None]:
    """Mean token loss (label-smoothed), correct argmax predictions, real target tokens and, for a
    batch with links (see :func:`attnviz.training.batches.make_batches`), the guided alignment loss
    of its attention."""
    src, lengths, tgt, *links = (x.to(device) for x in batch)
    scored = tgt[:, 1:] != PAD_ID  # [B, T] real target tokens: the output layer runs only there
    gold = tgt[:, 1:][scored]  # [N]
    out = model(src, lengths, tgt[:, :-1], teacher_forcing, scored=scored)  # logits [N, V], attention [B, T, S]
    loss, predicted = smoothed_cross_entropy(out.logits, gold, smoothing, PAD_ID)  # bf16 logits: loss in fp32
    align = None
    if links:
        reference, rows = reference_rows(links[0])  # [B, T, S], [B, T]
        align = guided_alignment_loss(out.attention.weights.float(), reference, rows)
    return loss, int((predicted == gold).sum()), gold.numel(), align


@torch.no_grad()
def evaluate_loss(
    model: nn.Module, batches: list[Batch], device: torch.device | str, group: SingleProcess | None = None
) -> tuple[float, float]:
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


def _keep_average_if_better(
    model: nn.Module,
    snapshots: Sequence[dict[str, Tensor]],
    valid_batches: list[Batch],
    device: torch.device,
    result: TrainResult,
    group: SingleProcess,
) -> None:
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


def train_step(run: TrainRun, batch: Batch) -> tuple[float, float, int, int]:
    """One optimiser step on this rank's shard of ``batch``: the token loss and alignment loss summed
    over target tokens, the correct predictions and the target tokens, of the whole batch (all ranks)."""
    cfg = run.cfg
    shard, weight = run.group.shard(batch)
    with autocast(run.device, run.precision):
        loss, correct, n, align = _loss_and_accuracy(
            run.trained, shard, run.device, cfg.label_smoothing, cfg.teacher_forcing
        )
    total = loss if align is None else loss + cfg.guided_weight * align
    run.optimizer.zero_grad(set_to_none=True)
    (total * weight).backward()
    nn.utils.clip_grad_norm_(run.model.parameters(), cfg.clip)
    run.optimizer.step()
    run.step += 1
    align_sum = 0.0 if align is None else align.item() * n  # weighted by target tokens, as the loss
    return run.group.sum(loss.item() * n, align_sum, correct, n)  # of the whole batch


def run_epoch(
    run: TrainRun,
    batches: list[Batch],
    epoch: int,
    result: TrainResult,
    callback: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Totals:
    """A :func:`train_step` per batch, at the rate of the schedule, until the batches, ``should_stop``
    (``result.stopped``), ``cfg.max_steps`` or the time budget (``result.out_of_time``) end the epoch."""
    cfg, group = run.cfg, run.group
    totals = Totals()
    for batch in batches:
        # the same on every rank: ranks stop at the same step and use the same rate
        asked, spent = group.agree(bool(should_stop and should_stop()), time.perf_counter() - run.start)
        if asked or (cfg.max_steps and run.step >= cfg.max_steps):
            result.stopped = asked
            break
        if cfg.max_seconds and spent >= cfg.max_seconds:
            result.out_of_time = True
            break
        if cfg.schedule == "linear":
            for param_group in run.optimizer.param_groups:
                param_group["lr"] = cfg.lr * _linear(cfg, run.step, run.total_steps, spent)
        run.lr = run.optimizer.param_groups[0]["lr"]  # the rate this step uses
        step = Totals(*train_step(run, batch))
        totals.add(step)
        recorded = _record_step(run, epoch, step.loss, step.correct, step.tokens)
        if callback and group.is_main:
            report = run.report("step", epoch, step, run.total_steps - run.step)
            report.history = run.recorder.history.to_dict() if recorded else None
            callback(report)
    return totals


def _record_step(run: TrainRun, epoch: int, loss_sum: float, correct: int, tokens: int) -> bool:
    """Count the step in the alignment history and record a point at a geometric step; whether it did."""
    if run.recorder is None:
        return False
    run.recorder.add_step(loss_sum, correct, tokens)
    if not geometric(run.step):
        return False
    run.recorder.record(run.model, run.device, "step", run.step, epoch, time.perf_counter() - run.start)
    return True


def end_epoch(
    run: TrainRun,
    epoch: int,
    totals: Totals,
    result: TrainResult,
    callback: Callable[[Progress], None] | None = None,
    on_epoch_end: Callable[[Translator, TrainResult], object] | None = None,
) -> bool:
    """Validate, keep the best weights (or decay the rate), report the epoch and record where training
    stands in ``translator.meta["progress"]``; whether training ends here."""
    cfg, group, model, translator = run.cfg, run.group, run.model, run.translator
    if cfg.average_last > 1:
        run.snapshots.append({k: v.detach().float().clone() for k, v in model.state_dict().items()})
    valid = run.valid_batches
    valid_loss, valid_acc = evaluate_loss(model, valid, run.device, group) if valid else (None, None)
    score = valid_loss if valid_loss is not None else totals.loss / totals.tokens
    if score < result.best_valid_loss:
        result.best_valid_loss, result.best_epoch, run.bad_epochs = score, epoch, 0
        run.best_state = copy.deepcopy(model.state_dict())
    else:
        run.bad_epochs += 1
        for param_group in run.optimizer.param_groups:
            param_group["lr"] *= cfg.lr_decay
    steps_left = max(run.total_steps - run.step, 0)
    report = run.report("epoch", epoch, totals, steps_left, valid_loss=valid_loss, valid_accuracy=valid_acc)
    elapsed = report.seconds
    if cfg.probe and group.is_main:
        model.eval()
        report.probe = translator.translate(cfg.probe)
    if run.recorder is not None:
        run.recorder.record(model, run.device, "epoch", run.step, epoch, elapsed, valid_loss)
        report.history = run.recorder.history.to_dict() if callback else None
    result.history.append(report.as_row())
    result.epochs_run = epoch
    if callback and group.is_main:
        callback(report)
    if on_epoch_end and group.is_main:  # what a resume needs beyond the checkpoint, saved beside it
        result.resume_state = ResumeState(
            epoch,
            run.step,
            model.state_dict(),
            run.optimizer.state_dict(),
            list(run.rng.getstate()) if run.rng is not None else None,
            torch.get_rng_state() if group.world == 1 else None,
            run.best_state,
            list(run.snapshots),
        )
    translator.meta["progress"] = {
        "epoch": epoch,
        "step": run.step,
        "seconds": round(elapsed, 1),
        "best_valid_loss": _finite(result.best_valid_loss),
        "best_epoch": result.best_epoch,
        "bad_epochs": run.bad_epochs,
        "history": result.history,
    }
    if on_epoch_end and group.is_main:
        on_epoch_end(translator, result)
    if result.stopped or (cfg.max_steps and run.step >= cfg.max_steps):
        return True
    if cfg.patience is not None and run.bad_epochs >= cfg.patience:
        result.early_stopped = True
        return True
    return result.out_of_time


def finish_run(run: TrainRun, result: TrainResult) -> None:
    """Load the best (or averaged) weights and record in ``translator.meta`` how the training ran."""
    model, translator = run.model, run.translator
    if run.best_state is not None:
        model.load_state_dict(run.best_state)
    if len(run.snapshots) > 1 and run.valid_batches and not result.stopped:
        _keep_average_if_better(model, run.snapshots, run.valid_batches, run.device, result, run.group)
    model.eval()
    result.seconds = time.perf_counter() - run.start
    if not result.stopped:  # a stopped training keeps its record, so it can be resumed later
        translator.meta.pop("progress", None)
    translator.meta.pop("ending", None)  # a resumed training's earlier ending
    kept = result.best_epoch if run.best_state is not None else result.epochs_run  # none better in this run
    if note := ending(result, run.cfg, bool(run.valid_batches), kept):
        translator.meta["ending"] = note
    translator.meta.update(
        {
            "train_seconds": round(result.seconds, 1),
            "epochs_run": result.epochs_run,
            "recipe": run.cfg.to_dict(),
            "averaged_epochs": result.averaged,
            "device": str(run.device),
            "hardware": run.hardware,
            "precision": run.precision,
        }
    )


class _EpochStart:
    """Where training stood when an epoch began: its step and weights, and the history's points so far."""

    def __init__(self, run: TrainRun):
        self.step = run.step
        self.state = {k: v.detach().clone() for k, v in run.model.state_dict().items()}

    def restore(self, run: TrainRun) -> None:
        """Go back to the epoch's start: the weights, the step count, and the history points recorded since
        dropped, so that a resume trains the whole epoch once, as an uninterrupted training does."""
        run.model.load_state_dict(self.state)
        run.step = self.step
        if run.recorder is not None:
            history = run.recorder.history
            history.keep([i for i, point in enumerate(history.points) if point["step"] <= self.step])


def fit(
    translator: Translator,
    corpus: Corpus,
    cfg: TrainConfig,
    callback: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_epoch_end: Callable[[Translator, TrainResult], object] | None = None,
    resume: dict | None = None,
    group: SingleProcess | None = None,
    links: Sequence[Sequence[Link]] | None = None,
) -> TrainResult:
    """Train ``translator.model`` in place on ``corpus.train``; keep the best validation epoch.

    After each epoch ``translator.meta["progress"]`` records where training stands and
    ``on_epoch_end`` can save a checkpoint; ``should_stop`` inside an epoch ends training at the
    last finished epoch (its weights, step count and history), so that no half epoch counts as one.
    ``resume`` (that record, read back from such a checkpoint) continues from the next epoch with
    the saved weights: same epoch count, schedule position and time budget; Adam's moments start
    afresh, and the best weights are those of the saved epoch or a later, better one.

    ``group`` (from :func:`attnviz.training.distributed.join_torchrun`) trains this process's shard of every
    batch with DistributedDataParallel; only its rank 0 calls ``callback`` and ``on_epoch_end``.

    With ``cfg.record_history`` rank 0 records the alignment history of the training in
    ``translator.history`` (:mod:`attnviz.training.history`); a resumed training continues the
    history its checkpoint holds. Reports that add a point carry it as plain data (``history``).

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
    resume = resume or {}
    first_epoch = int(resume.get("epoch", 0)) + 1
    rng = random.Random(cfg.seed if first_epoch == 1 else cfg.seed * 1000 + first_epoch)
    state = resume.get("state")
    if state is not None and state.shuffler:  # the data order the stopped run would have drawn next
        version, internal, gauss = state.shuffler
        rng.setstate((version, tuple(internal), gauss))
    run = start_run(translator, corpus, cfg, group, resume)
    run.rng = rng
    if cfg.record_history and group.is_main:
        steps_per_epoch = math.ceil(len(corpus.train) / cfg.batch_size)
        run.recorder = HistoryRecorder.start(translator, corpus, cfg.probe, steps_per_epoch, bool(resume))
        if run.recorder is not None and not resume:
            run.recorder.record(run.model, run.device, "start", 0, 0, 0.0)
    result = TrainResult(history=list(resume.get("history", [])), epochs_run=first_epoch - 1)
    result.best_valid_loss = float(resume.get("best_valid_loss") or math.inf)
    best = resume.get("best_epoch")  # absent from a record an older attnviz saved
    result.best_epoch = best if isinstance(best, int) and not isinstance(best, bool) else 0
    src_vocab, tgt_vocab = translator.src_vocab, translator.tgt_vocab
    train_links = links if guided else None
    try:
        with reuse_freed_memory(run.device):  # each step's [N, V] blocks reuse the last step's pages
            for epoch in range(first_epoch, cfg.epochs + 1):
                run.model.train()
                batches = make_batches(corpus.train, src_vocab, tgt_vocab, cfg.batch_size, rng, train_links)
                start = _EpochStart(run)
                totals = run_epoch(run, batches, epoch, result, callback, should_stop)
                if result.stopped and 0 < run.step - start.step < len(batches):
                    start.restore(run)  # a stop inside an epoch: the last finished one stands, to resume from
                    break
                if totals.tokens == 0 or end_epoch(run, epoch, totals, result, callback, on_epoch_end):
                    break
    finally:
        drop_graphs(run.model)  # also when a step fails: the model goes back eager
        run.model.eval()  # also on KeyboardInterrupt (a notebook's interrupt): no dropout in later decodes
    finish_run(run, result)
    return result
