"""``python -m attnviz attribute``: gradient attributions of each output token beside attention."""

from __future__ import annotations

import argparse
import json

import numpy as np

from attnviz import catalog
from attnviz.attribution import BASELINES, MAX_STEPS, METHODS, Attribution, attribute


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``python -m attnviz attribute``."""
    p.add_argument("--model", required=True, help="a model name (see `list`) or a .safetensors path")
    p.add_argument("--method", default="ig", choices=list(METHODS),
                   help="ig: integrated gradients, gxi: gradient x input, occlusion: one token at a time")  # fmt: skip
    p.add_argument("--reference", help="explain forced decoding on this translation (default: the greedy one)")
    p.add_argument("--steps", type=_steps, default=32, help="integrated gradients: quadrature points (default 32)")
    p.add_argument("--baseline", default="zeros", choices=list(BASELINES),
                   help="embedding put in place of the source: zeros (default), pad or unk")  # fmt: skip
    p.add_argument("--json", action="store_true", help="tokens, values, delta and agreement as JSON")
    p.add_argument("source")


def _steps(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= MAX_STEPS:
        raise argparse.ArgumentTypeError(f"{value} is out of range [1, {MAX_STEPS}]")
    return value


def run(args: argparse.Namespace) -> int:
    model = catalog.load(args.model, roots=catalog.model_roots(include_cwd=True))
    result = attribute(model, args.source, args.reference, args.method, args.steps, args.baseline)
    if args.json:
        print(json.dumps({"model": args.model, **result.to_dict()}, ensure_ascii=False, allow_nan=False))
    else:
        print(format_text(result))
    return 0


def format_text(a: Attribution) -> str:
    """The matrix (target rows, source columns), the per-step agreement and the summary."""
    width = max(6, *(len(t) for t in a.source_tokens))
    label = max(6, *(len(t) for t in a.target_tokens))
    header = " " * label + " " + " ".join(f"{t:>{width}}" for t in a.source_tokens)
    lines = [f"{a.method_name}; baseline: {a.baseline}", header]
    for tok, row in zip(a.target_tokens, a.values, strict=True):
        lines.append(f"{tok:>{label}} " + " ".join(f"{v:>{width}.3f}" for v in row))
    lines.append("")
    head = f"{'step':>4} {'target':>{label}} {'attention':>{width}} {'attribution':>{width}} {'spearman':>8}"
    lines.append(head + (f" {'delta':>8}" if a.delta is not None else ""))
    for t, tok in enumerate(a.target_tokens):
        rho = "n/a" if np.isnan(a.spearman[t]) else f"{a.spearman[t]:+.2f}"
        line = f"{t:>4} {tok:>{label}} {a.attention_top[t]:>{width}} {a.attribution_top[t]:>{width}} {rho:>8}"
        lines.append(line + (f" {a.delta[t]:>+8.3f}" if a.delta is not None else ""))
    lines.append("")
    lines.append(a.summary())
    return "\n".join(lines)
