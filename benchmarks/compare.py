"""Time attnviz against the textbook Bahdanau model, alternating runs to share the noise.

Run from the repository root::

    .venv/bin/python benchmarks/compare.py [--rounds 5] [--steps 5] [--threads T] [--json]

Every round times ``--steps`` training steps of each model in turn (after one warm-up
round), so a burst of load on a shared machine hits all models alike. Reported per model:
the median over rounds of target tokens per second (``batch * length`` / mean step time in
the round) and the best round; ratios are of the medians. Translation is
:func:`attnviz.decoding.search.greedy` with its full trace, exactly 20 steps (see ``attnviz.training.bench``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere
sys.path.insert(0, str(Path(__file__).resolve().parent))

from textbook import TextbookSeq2Seq

from attnviz.data.vocab import PAD_ID
from attnviz.model.seq2seq import build_model
from attnviz.training.bench import (
    TRANSLATE_TOKENS,
    bench_config,
    percentile,
    random_batch,
    seq2seq_forward,
    time_training,
    time_translation,
    training_loss,
)

SIZES = {"batch": 64, "emb": 128, "hidden": 256, "length": 16, "vocab": 2000}
TARGETS = {"additive_vs_textbook": 3.0, "luong_fast_vs_textbook": 6.0, "translate_ms_p50": 8.0}


def build_contenders(seed: int = 0) -> dict:
    """name -> (forward, parameters, attnviz model or None, loss), all of the sizes in ``SIZES``.

    attnviz models train with attnviz's loss (``attnviz.training.loss``), the textbook model with
    ``nn.CrossEntropyLoss``, as the tutorials write it; both compute the same numbers."""
    emb, hidden, length, vocab = SIZES["emb"], SIZES["hidden"], SIZES["length"], SIZES["vocab"]
    additive = build_model(bench_config("additive", "bahdanau", emb, hidden, length, vocab), seed).train()
    luong = build_model(bench_config("general", "luong", emb, hidden, length, vocab), seed).train()
    torch.manual_seed(seed)
    textbook = TextbookSeq2Seq(vocab, vocab, emb, hidden, attn_dim=hidden).train()
    textbook_loss = nn.CrossEntropyLoss(ignore_index=PAD_ID)
    return {
        "attnviz additive/bahdanau": (seq2seq_forward(additive), list(additive.parameters()), additive, training_loss),
        "attnviz general/luong (fast path)": (seq2seq_forward(luong), list(luong.parameters()), luong, training_loss),
        "textbook additive/bahdanau": (textbook, list(textbook.parameters()), None, textbook_loss),
    }


def compare(rounds: int = 5, steps: int = 5, translate_runs: int = 30, seed: int = 0) -> dict:
    """Alternate ``rounds`` rounds of ``steps`` training steps per model; then time translation."""
    contenders = build_contenders(seed)
    batch = random_batch(SIZES["batch"], SIZES["length"], SIZES["vocab"], torch.Generator().manual_seed(seed))
    tokens = SIZES["batch"] * SIZES["length"]
    for forward, params, _, loss in contenders.values():
        time_training(forward, params, batch, steps=0, warmup=2, loss_fn=loss)
    per_round: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, (forward, params, _, loss) in contenders.items():
            seconds = time_training(forward, params, batch, steps, warmup=0, loss_fn=loss)
            per_round[name].append(tokens / statistics.mean(seconds))
    models = {}
    for name, (_, params, model, _) in contenders.items():
        row = {
            "train_tokens_per_s_median": round(statistics.median(per_round[name]), 1),
            "train_tokens_per_s_best": round(max(per_round[name]), 1),
            "params": sum(p.numel() for p in params),
        }
        if model is not None:
            times = time_translation(model, translate_runs, seed)
            row["translate_ms_p50"] = round(statistics.median(times) * 1000, 2)
            row["translate_ms_p95"] = round(percentile(times, 95) * 1000, 2)
        models[name] = row
    additive, luong, textbook = (models[name]["train_tokens_per_s_median"] for name in contenders)
    return {
        "models": models,
        "ratios": {
            "additive_vs_textbook": round(additive / textbook, 2),
            "luong_fast_vs_textbook": round(luong / textbook, 2),
        },
        "targets": TARGETS,
        "settings": {
            **SIZES,
            "rounds": rounds,
            "steps_per_round": steps,
            "translate_tokens": TRANSLATE_TOKENS,
            "translate_runs": translate_runs,
            "threads": torch.get_num_threads(),
            "seed": seed,
        },
    }


def print_table(result: dict) -> None:
    """A readable table of ``compare``'s result."""
    print(f"{'model':36} {'tokens/s p50':>12} {'best':>9} {'params':>10} {'translate p50/p95 ms':>21}")
    for name, row in result["models"].items():
        translate = (
            f"{row['translate_ms_p50']:.2f} / {row['translate_ms_p95']:.2f}" if "translate_ms_p50" in row else "-"
        )
        print(
            f"{name:36} {row['train_tokens_per_s_median']:12.0f} {row['train_tokens_per_s_best']:9.0f} "
            f"{row['params']:10,} {translate:>21}"
        )
    for name, value in result["ratios"].items():
        print(f"{name}: {value:.2f}x (target >= {TARGETS[name]:.0f}x)")
    print(f"settings: {result['settings']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="alternated rounds")
    parser.add_argument("--steps", type=int, default=5, help="training steps per model per round")
    parser.add_argument("--translate-runs", type=int, default=30)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.steps < 1 or args.translate_runs < 1:
        parser.error("--rounds, --steps and --translate-runs must be at least 1")
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    result = compare(args.rounds, args.steps, args.translate_runs, args.seed)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
