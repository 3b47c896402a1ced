"""``attnviz attribute``: gradient attributions of each output token beside attention."""

from __future__ import annotations

import argparse

import numpy as np

from attnviz.cli.options import BEAM_HELP, MODEL_HELP, int_in, print_json
from attnviz.cli.streams import sentence
from attnviz.explain import BASELINES, MAX_STEPS, METHODS, Attribution, attribute
from attnviz.store import load, model_roots

HELP = "gradient attributions of each output token to the source, beside attention"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``attnviz attribute``."""
    p.add_argument("--model", required=True, help=MODEL_HELP)
    p.add_argument(
        "--method",
        default="ig",
        choices=list(METHODS),
        help="ig: integrated gradients, gxi: gradient x input, occlusion: one token at a time; default ig",
    )
    p.add_argument(
        "--reference", type=sentence, help="explain forced decoding on this translation (default: the model's own)"
    )
    p.add_argument(
        "--beam",
        type=int_in(1, 20),
        default=1,
        help=BEAM_HELP,
    )
    p.add_argument("--steps", type=_steps, default=32, help="integrated gradients: quadrature points (default 32)")
    p.add_argument(
        "--baseline",
        default="zeros",
        choices=list(BASELINES),
        help="embedding put in place of the source: zeros, pad or unk; default zeros",
    )
    p.add_argument("--json", action="store_true", help="tokens, values, delta and agreement as JSON")
    p.add_argument("source", type=sentence, help="the sentence to explain")


def _steps(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= MAX_STEPS:
        raise argparse.ArgumentTypeError(f"{value} is out of range [1, {MAX_STEPS}]")
    return value


def run(args: argparse.Namespace) -> int:
    model = load(args.model, roots=model_roots(include_cwd=True))
    result = attribute(model, args.source, args.reference, args.method, args.steps, args.baseline, args.beam)
    if args.json:
        print_json({"model": args.model, **result.to_dict()})
    else:
        print(format_text(result))
    return 0


def format_text(a: Attribution) -> str:
    """The matrix (target rows, source columns), the per-step agreement and the summary."""
    source, target = _shown(a.source_tokens), _shown(a.target_tokens)
    width = max(9, *(len(t) for t in source))  # room for -1.23e-05: confident models give tiny values
    label = max(6, *(len(t) for t in target))
    header = " " * label + " " + " ".join(f"{t:>{width}}" for t in source)
    lines = [f"{a.method_name}; baseline: {a.baseline}", header]
    for tok, row in zip(target, a.values, strict=True):
        lines.append(f"{tok:>{label}} " + " ".join(f"{v:>{width}.3g}" for v in row))
    lines.append("")
    head = f"{'step':>4} {'target':>{label}} {'attention':>{width}} {'attribution':>{width}} {'spearman':>8}"
    lines.append(head + (f" {'delta':>9}" if a.delta is not None else ""))
    first_att, first_attr = _shown(a.attention_top), _shown(a.attribution_top)
    for t, tok in enumerate(target):
        rho = "n/a" if np.isnan(a.spearman[t]) else f"{a.spearman[t]:+.2f}"
        line = f"{t:>4} {tok:>{label}} {first_att[t]:>{width}} {first_attr[t]:>{width}} {rho:>8}"
        lines.append(line + (f" {a.delta[t]:>+9.3g}" if a.delta is not None else ""))
    lines.append("")
    lines.append(a.summary())
    return "\n".join(lines)


def _shown(tokens: list[str]) -> list[str]:
    """Tokens for a fixed-width table: a space (character-level models) as ␣."""
    return ["␣" if t.isspace() else t for t in tokens]
