"""``attnviz bench``: training and decoding speed on random data."""

from __future__ import annotations

import argparse

from attnviz.cli.options import print_json
from attnviz.model import SCORES
from attnviz.training import TRANSLATE_TOKENS, run_bench

HELP = "training and decoding speed on random data"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``attnviz bench``."""
    parser.add_argument(
        "--score", default="additive", help=f"score function: {', '.join(sorted(SCORES))} (default additive)"
    )
    parser.add_argument("--style", default="bahdanau", help="decoder style: bahdanau or luong (default bahdanau)")
    parser.add_argument("--batch", type=int, default=64, help="sentences per training batch (default 64)")
    parser.add_argument("--emb", type=int, default=128, help="embedding size (default 128)")
    parser.add_argument("--hidden", type=int, default=256, help="hidden size, per encoder direction (default 256)")
    parser.add_argument("--len", type=int, default=16, dest="len", help="source and target length (default 16)")
    parser.add_argument("--vocab", type=int, default=2000, help="source and target vocabulary size (default 2000)")
    parser.add_argument("--steps", type=int, default=20, help="timed training steps (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed training steps first (default 3)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the model and the random data (default 0)")
    parser.add_argument("--input-feeding", action="store_true", help="Luong input feeding (no fast path)")
    parser.add_argument("--translate-runs", type=int, default=30, help="timed greedy translations (default 30)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args: argparse.Namespace) -> int:
    """Run the benchmark from parsed arguments and print the result; raises ConfigError."""
    result = run_bench(
        score=args.score,
        style=args.style,
        batch=args.batch,
        emb=args.emb,
        hidden=args.hidden,
        length=args.len,
        vocab=args.vocab,
        steps=args.steps,
        warmup=getattr(args, "warmup", 3),
        threads=args.threads,
        seed=getattr(args, "seed", 0),
        input_feeding=getattr(args, "input_feeding", False),
        translate_runs=getattr(args, "translate_runs", 30),
    )
    if args.json:
        print_json(result)
    else:
        print(
            f"{result['score']}/{result['style']}: train {result['train_tokens_per_s']:.0f} tokens/s "
            f"({result['train_step_ms_p50']:.1f} ms/step, batch {result['batch']} x {result['length']}), "
            f"translate {result['translate_ms_p50']:.2f} ms p50 / {result['translate_ms_p95']:.2f} ms p95 "
            f"({TRANSLATE_TOKENS} tokens), {result['params']:,} parameters, {result['threads']} threads"
        )
    return 0
