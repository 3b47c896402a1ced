"""Speed measurements: training throughput and traced greedy translation on random data.

``run_bench`` builds a model of the given sizes (GRU encoder, bidirectional), feeds it
random token batches and reports

- ``train_tokens_per_s``: target tokens (``batch * length``) divided by the median time of
  one training step (forward, attnviz's cross-entropy, backward, Adam step), measured after
  ``warmup`` untimed steps;
- ``train_step_ms_p50``: that median step time;
- ``translate_ms_p50`` / ``translate_ms_p95``: :func:`attnviz.decoding.search.greedy` (full trace, in
  eval mode) on one sentence of ``TRANSLATE_TOKENS`` source tokens plus ``<eos>``. The
  output bias of ``<eos>`` is set to ``-inf`` on a copy of the model, so every run decodes
  exactly ``TRANSLATE_TOKENS`` steps whatever the random weights prefer; this is checked.

Timings are wall-clock (``time.perf_counter``) on whatever device the model is on (the CPU
here) and are noisy on a shared machine: compare medians of alternated runs
(``benchmarks/compare.py``), not single numbers.
"""

from __future__ import annotations

import copy
import statistics
import time
from collections.abc import Callable

import torch
from torch import Tensor, nn

from attnviz.data import BOS_ID, EOS_ID, PAD_ID
from attnviz.decoding import greedy
from attnviz.errors import ConfigError
from attnviz.model import STYLES, ModelConfig, Seq2Seq, build_model, get_score
from attnviz.training.loss import smoothed_cross_entropy

TRANSLATE_TOKENS = 20  # source tokens of the translated sentence, and decoder steps
FIRST_WORD_ID = EOS_ID + 1  # random tokens avoid <pad> <unk> <bos> <eos>

Batch = tuple[Tensor, Tensor, Tensor]  # src [B, S], lengths [B], tgt [B, T + 1]
Forward = Callable[[Tensor, Tensor, Tensor], Tensor]  # (src, lengths, tgt_in) -> logits [B, T, V]
Loss = Callable[[Tensor, Tensor], Tensor]  # (logits [N, V], gold [N]) -> mean loss


def check_settings(
    score: str,
    style: str,
    batch: int,
    emb: int,
    hidden: int,
    length: int,
    vocab: int,
    steps: int,
    warmup: int,
    threads: int | None,
    input_feeding: bool = False,
    translate_runs: int = 1,
) -> None:
    """Raise :class:`ConfigError` naming the first bad setting and its allowed range."""
    get_score(score)
    if style not in STYLES:
        raise ConfigError(f"unknown style {style!r}; choose one of {STYLES}")
    ranges = {
        "batch": (batch, 1, 4096),
        "emb": (emb, 1, 4096),
        "hidden": (hidden, 1, 4096),
        "length": (length, 1, 1000),
        "vocab": (vocab, FIRST_WORD_ID + 1, 100_000),
        "steps": (steps, 1, 100_000),
        "warmup": (warmup, 0, 100_000),
        "translate_runs": (translate_runs, 1, 100_000),
    }
    for name, (value, low, high) in ranges.items():
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ConfigError(f"{name} must be an integer between {low} and {high}, got {value!r}")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ConfigError(f"threads must be a positive integer (or None for torch's default), got {threads!r}")
    if input_feeding and style != "luong":
        raise ConfigError("input_feeding belongs to the Luong decoder; use style='luong' or drop it")


def bench_config(
    score: str, style: str, emb: int, hidden: int, length: int, vocab: int, input_feeding: bool = False
) -> ModelConfig:
    """The benchmarked architecture: bidirectional GRU encoder, GRU decoder, attn_dim = hidden."""
    return ModelConfig(
        src_vocab_size=vocab,
        tgt_vocab_size=vocab,
        score=score,
        style=style,
        emb_dim=emb,
        hidden_dim=hidden,
        attn_dim=hidden,
        input_feeding=input_feeding,
        max_src_len=max(100, length + 1, TRANSLATE_TOKENS + 1),
    )


def random_batch(batch: int, length: int, vocab: int, generator: torch.Generator) -> Batch:
    """Full-length random source and target: src ``[B, L]``, tgt ``<bos> y_1..y_L`` ``[B, L + 1]``."""
    src = torch.randint(FIRST_WORD_ID, vocab, (batch, length), generator=generator)  # [B, L]
    words = torch.randint(FIRST_WORD_ID, vocab, (batch, length), generator=generator)  # [B, L]
    tgt = torch.cat([torch.full((batch, 1), BOS_ID), words], dim=1)  # [B, L + 1]
    return src, torch.full((batch,), length), tgt


def training_loss(logits: Tensor, gold: Tensor) -> Tensor:
    """The loss attnviz trains with (``attnviz.training.loss``; no label smoothing here): logits ``[N, V]``."""
    return smoothed_cross_entropy(logits, gold, 0.0, PAD_ID)[0]


def train_step(forward: Forward, optimizer: torch.optim.Optimizer, loss_fn: Loss, batch: Batch) -> float:
    """One step as in training: forward, cross-entropy, backward, Adam step. Returns seconds."""
    src, lengths, tgt = batch
    start = time.perf_counter()
    logits = forward(src, lengths, tgt[:, :-1])  # [B, T, V]
    loss = loss_fn(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return time.perf_counter() - start


def seq2seq_forward(model: Seq2Seq) -> Forward:
    """attnviz's teacher-forced forward, reduced to logits."""
    return lambda src, lengths, tgt_in: model(src, lengths, tgt_in).logits


def time_training(
    forward: Forward, params: list[nn.Parameter], batch: Batch, steps: int, warmup: int, loss_fn: Loss = training_loss
) -> list[float]:
    """Seconds of each of ``steps`` timed training steps, after ``warmup`` untimed ones."""
    optimizer = torch.optim.Adam(params, lr=1e-3)
    for _ in range(warmup):
        train_step(forward, optimizer, loss_fn, batch)
    return [train_step(forward, optimizer, loss_fn, batch) for _ in range(steps)]


def forbid_eos(model: Seq2Seq) -> Seq2Seq:
    """A copy whose output layer can never choose ``<eos>`` (fixed-length decoding)."""
    model = copy.deepcopy(model).eval()
    bias = model.decoder.out_bias if model.cfg.tie_embeddings else model.decoder.out.bias
    with torch.no_grad():
        bias[EOS_ID] = -torch.inf
    return model


def time_translation(model: Seq2Seq, runs: int, seed: int = 0) -> list[float]:
    """Seconds of ``runs`` traced greedy decodes of one ``TRANSLATE_TOKENS``-token sentence."""
    model = forbid_eos(model)
    generator = torch.Generator().manual_seed(seed)
    words = torch.randint(FIRST_WORD_ID, model.cfg.src_vocab_size, (TRANSLATE_TOKENS,), generator=generator)
    src_ids = [*words.tolist(), EOS_ID]
    greedy(model, src_ids, TRANSLATE_TOKENS)  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        hyp = greedy(model, src_ids, TRANSLATE_TOKENS)
        times.append(time.perf_counter() - start)
        if len(hyp.tokens) != TRANSLATE_TOKENS:
            raise RuntimeError(f"greedy decoded {len(hyp.tokens)} steps instead of {TRANSLATE_TOKENS}")
    return times


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile, ``q`` in [0, 100]."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def run_bench(
    score: str = "additive",
    style: str = "bahdanau",
    batch: int = 64,
    emb: int = 128,
    hidden: int = 256,
    length: int = 16,
    vocab: int = 2000,
    steps: int = 20,
    warmup: int = 3,
    threads: int | None = None,
    seed: int = 0,
    input_feeding: bool = False,
    translate_runs: int = 30,
) -> dict:
    """Time training steps and traced greedy translation of one model; see the module docstring."""
    check_settings(
        score, style, batch, emb, hidden, length, vocab, steps, warmup, threads, input_feeding, translate_runs
    )
    previous_threads = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        model = build_model(bench_config(score, style, emb, hidden, length, vocab, input_feeding), seed).train()
        data = random_batch(batch, length, vocab, torch.Generator().manual_seed(seed))
        step_s = time_training(seq2seq_forward(model), list(model.parameters()), data, steps, warmup)
        translate_s = time_translation(model, translate_runs, seed)
        used_threads = torch.get_num_threads()
    finally:
        torch.set_num_threads(previous_threads)
    step_p50 = statistics.median(step_s)
    return {
        "train_tokens_per_s": round(batch * length / step_p50, 1),
        "train_step_ms_p50": round(step_p50 * 1000, 2),
        "translate_ms_p50": round(statistics.median(translate_s) * 1000, 3),
        "translate_ms_p95": round(percentile(translate_s, 95) * 1000, 3),
        "params": model.num_parameters(),
        "score": score,
        "style": style,
        "input_feeding": input_feeding,
        "batch": batch,
        "emb": emb,
        "hidden": hidden,
        "length": length,
        "vocab": vocab,
        "steps": steps,
        "warmup": warmup,
        "translate_tokens": TRANSLATE_TOKENS,
        "translate_runs": translate_runs,
        "threads": used_threads,
        "seed": seed,
        "device": "cpu",
    }
