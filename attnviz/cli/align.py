"""The ``align --method`` and ``align-eval`` subcommands: word links from attention, scored against gold."""

from __future__ import annotations

import argparse
import json

from attnviz.decoding import Translator
from attnviz.errors import DataError, InputError
from attnviz.links import METHODS, SYMMETRIC, align_corpus, align_words, goldfile
from attnviz.store import load, model_roots


def _threshold(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{value} is out of range (0, 1]")
    return value


def add_method_arguments(parser: argparse.ArgumentParser, default: str | None) -> None:
    """``--method``, ``--reverse-model`` and ``--threshold``."""
    parser.add_argument(
        "--method",
        choices=METHODS,
        default=default,
        help="extract word links: argmax per target word, all weights >= --threshold, or combine both "
        "directions (needs --reverse-model)" + ("" if default else "; default: the raw token-level argmax"),
    )
    parser.add_argument("--reverse-model", help="the opposite direction's model, for the symmetric methods")
    parser.add_argument("--threshold", type=_threshold, default=0.3, help="for --method threshold (default 0.3)")


def _models(args) -> tuple[Translator, Translator | None]:
    roots = model_roots(include_cwd=True)
    if args.reverse_model and args.method not in SYMMETRIC:
        raise InputError(f"--reverse-model is used by {', '.join(SYMMETRIC)} only; drop it or change --method")
    reverse = load(args.reverse_model, roots=roots) if args.reverse_model else None
    return load(args.model, roots=roots), reverse


def run_align(args) -> int:
    """``align --method M``: the word links as a Pharaoh line, or JSON."""
    model, reverse = _models(args)
    wa = align_words(model, args.source, args.target, args.method, reverse, args.threshold)
    if args.json:
        print(json.dumps(wa.to_dict(), ensure_ascii=False))
    else:
        print(wa.to_pharaoh())
    return 0


def add_eval_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``python -m attnviz align-eval``."""
    parser.add_argument("--model", required=True, help="a model name (see `list`) or a .safetensors path")
    parser.add_argument("--src", required=True, help="source sentences, one per line, tokens separated by spaces")
    parser.add_argument("--tgt", required=True, help="target sentences, line by line with --src")
    parser.add_argument("--gold", required=True, help="gold alignment file")
    parser.add_argument("--format", choices=goldfile.FORMATS, default="pharaoh", help="gold format (default pharaoh)")
    parser.add_argument("--one-based", action="store_true", help="the gold indices start at 1 (NAACL files do)")
    add_method_arguments(parser, default="argmax")
    parser.add_argument("--per-sentence", action="store_true", help="also list each sentence's scores")
    parser.add_argument("--json", action="store_true")


def run_eval(args) -> int:
    """Align every pair of ``--src``/``--tgt`` and print precision, recall and AER against ``--gold``."""
    sources, targets = goldfile.read_sentences(args.src), goldfile.read_sentences(args.tgt)
    if len(sources) != len(targets):
        raise DataError(f"{args.src} has {len(sources)} lines but {args.tgt} has {len(targets)}; give aligned files")
    lengths = [(len(s), len(t)) for s, t in zip(sources, targets, strict=True)]
    gold = goldfile.read_gold(args.gold, lengths, args.format, args.one_based)
    model, reverse = _models(args)
    predicted = align_corpus(model, sources, targets, args.method, reverse, args.threshold)
    corpus, per_sentence = goldfile.score(predicted, gold)
    result = {"model": args.model, "method": args.method, "n": len(gold), **corpus.to_dict()}
    if args.reverse_model:
        result["reverse_model"] = args.reverse_model
    if args.per_sentence:
        result["sentences"] = [c.to_dict() for c in per_sentence]
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return 0
    for key in ("model", "method", "n", "precision", "recall", "f1", "aer"):
        print(f"{key:>10}: {result[key]}")
    for n, c in enumerate(per_sentence if args.per_sentence else [], start=1):
        print(f"{n:>6}  P {c.precision:.3f}  R {c.recall:.3f}  AER {c.aer:.3f}")
    return 0
