"""Adaptation: fine-tune a copy of a model on the bitext whose attention is to be read.

A model read on text far from its training data (the Hansards for a Multi30k model) attends
like a model out of its domain. Neural aligners and eflomal learn from the very text they align;
:func:`adapt` does the same for attention: ``steps`` optimiser steps of the translation loss
(teacher-forced, label-smoothed, :func:`attnviz.training.fit.fit`) on the given sentence pairs,
on a deep copy, so the model it was given (and any file it came from) is never changed. With
``guided=True`` the loss adds the guided alignment term against eflomal's links computed on the
same bitext (never a gold file). The copy's ``meta["adapted"]`` says how it was made; the
original's metrics are dropped from it, since they measure another model.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from attnviz.data import Corpus, make_pair
from attnviz.decoding import Translator
from attnviz.errors import ConfigError, DataError
from attnviz.training.config import MAX_EPOCHS, Progress, TrainConfig
from attnviz.training.fit import fit
from attnviz.training.guided_links import CACHE_DIR, GuidedConfig, training_links

MAX_STEPS = 100_000
MAX_PAIRS = 200_000
MAX_WORDS = 400  # a longer sentence is no sentence: the pair is left out of the adaptation


@dataclass(frozen=True)
class AdaptConfig:
    """How :func:`adapt` fine-tunes: ``steps`` optimiser steps of ``batch_size`` pairs at a constant ``lr``."""

    steps: int = 200
    lr: float = 5e-4
    batch_size: int = 32
    guided: bool = False  # add the guided alignment loss against eflomal's links of the same bitext
    guided_weight: float = 0.3
    label_smoothing: float = 0.1
    seed: int = 0
    device: str = "cpu"
    num_threads: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.steps, bool) or not isinstance(self.steps, int) or not 1 <= self.steps <= MAX_STEPS:
            raise ConfigError(f"adapt for 1 to {MAX_STEPS} steps (got {self.steps!r}); 200 is a good start")
        if not 0 < self.lr <= 0.1:
            raise ConfigError(f"the adaptation learning rate must be in (0, 0.1], got {self.lr}; 5e-4 is a good start")
        if not 1 <= self.batch_size <= 4096:
            raise ConfigError(f"the adaptation batch must hold 1 to 4096 pairs, got {self.batch_size}")


def check_adapt_size(n_pairs: int) -> None:
    """Refuse a bitext of more pairs than attnviz adapts on (:data:`MAX_PAIRS`): before anything
    else is read for it (a gold file of as many lines takes a minute)."""
    if n_pairs > MAX_PAIRS:
        raise DataError(f"{n_pairs} pairs are more than attnviz adapts on ({MAX_PAIRS}); give a part of them")


def adaptation_corpus(
    translator: Translator, sources: Sequence[Sequence[str]], targets: Sequence[Sequence[str]]
) -> Corpus:
    """The bitext as training pairs in the model's own tokens; pairs it cannot take are left out."""
    if len(sources) != len(targets):
        raise DataError(
            f"{len(sources)} source but {len(targets)} target sentences; the bitext must hold one pair a line"
        )
    if not sources:
        raise DataError("the bitext is empty: give at least one 'source ||| target' pair to adapt on")
    check_adapt_size(len(sources))
    pairs = []
    for src, tgt in zip(sources, targets, strict=True):
        if not src or not tgt or len(src) > MAX_WORDS or len(tgt) > MAX_WORDS:
            continue
        pair = make_pair(" ".join(src), " ".join(tgt), translator.src_tokenizer, translator.tgt_tokenizer)
        fits = len(pair.source_tokens) <= translator.max_source_tokens
        if fits and pair.source_tokens and pair.target_tokens:
            pairs.append(pair)
    if not pairs:
        raise DataError("no pair of the bitext fits the model (empty or too long sentences); nothing to adapt on")
    return Corpus("adaptation", pairs, [], [], translator.src_tokenizer, translator.tgt_tokenizer, False)


def adapt(
    translator: Translator,
    sources: Sequence[Sequence[str]],
    targets: Sequence[Sequence[str]],
    cfg: AdaptConfig | None = None,
    callback: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    links_cache: Path = CACHE_DIR,
) -> Translator:
    """A copy of ``translator`` fine-tuned on the sentence pairs ``sources`` x ``targets`` (words, as
    gold files give them); ``translator`` itself is untouched. ``should_stop`` ends it early (the
    copy keeps the steps done); ``callback`` gets :class:`Progress` reports as ``fit`` sends them."""
    cfg = cfg or AdaptConfig()
    corpus = adaptation_corpus(translator, sources, targets)
    links = None
    if cfg.guided:
        links, _ = training_links(corpus, GuidedConfig(weight=cfg.guided_weight, links="eflomal"), links_cache)
    pairs = len(corpus.train)
    batches = math.ceil(cfg.steps / MAX_EPOCHS)  # an epoch needs at least this many batches
    if math.ceil(pairs / cfg.batch_size) < batches:  # a few pairs and many steps: an epoch repeats the bitext
        rounds = math.ceil(batches * cfg.batch_size / pairs)
        corpus = replace(corpus, train=corpus.train * rounds)
        links = links * rounds if links is not None else None
    adapted = copy.deepcopy(translator)
    adapted.history = None  # the training's alignment history is not this copy's
    per_epoch = math.ceil(len(corpus.train) / cfg.batch_size)
    train = TrainConfig(
        epochs=math.ceil(cfg.steps / per_epoch),
        batch_size=cfg.batch_size,
        lr=cfg.lr,
        label_smoothing=cfg.label_smoothing,
        patience=None,
        seed=cfg.seed,
        max_steps=cfg.steps,
        device=cfg.device,
        num_threads=cfg.num_threads,
        record_history=False,
        cuda_graphs=False,
        guided_weight=cfg.guided_weight if cfg.guided else 0.0,
    )
    steps = [0]

    def report(progress: Progress) -> None:
        steps[0] = progress.step
        if callback:
            callback(progress)

    start = time.perf_counter()
    result = fit(adapted, corpus, train, report, should_stop, links=links)
    adapted.model.to(translator.device).eval()
    adapted.meta = {k: v for k, v in translator.meta.items() if k not in ("metrics", "check", "progress")}
    adapted.meta["adapted"] = {
        **asdict(cfg),
        "from": translator.meta.get("name") or "the model",
        "pairs": pairs,
        "left_out": len(sources) - pairs,
        "steps_run": steps[0],
        "stopped": result.stopped,
        "seconds": round(time.perf_counter() - start, 1),
    }
    return adapted
