"""``attnviz align-eval``: precision, recall and AER of attention links against a gold alignment file."""

from __future__ import annotations

import argparse
import json

from attnviz.cli.align import add_method_arguments, load_models
from attnviz.cli.options import add_device
from attnviz.errors import DataError
from attnviz.links import align_corpus, goldfile

HELP = "precision, recall and AER of attention links against a gold file"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``attnviz align-eval``."""
    parser.add_argument("--model", required=True, help="a model name (see `list`) or a .safetensors path")
    parser.add_argument("--src", required=True, help="source sentences, one per line, tokens separated by spaces")
    parser.add_argument("--tgt", required=True, help="target sentences, line by line with --src")
    parser.add_argument("--gold", required=True, help="gold alignment file")
    parser.add_argument("--format", choices=goldfile.FORMATS, default="pharaoh", help="gold format (default pharaoh)")
    parser.add_argument("--one-based", action="store_true", help="the gold indices start at 1 (NAACL files do)")
    add_method_arguments(parser, default="argmax")
    parser.add_argument("--per-sentence", action="store_true", help="also list each sentence's scores")
    add_device(parser)
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    """Align every pair of ``--src``/``--tgt`` and print precision, recall and AER against ``--gold``."""
    sources, targets = goldfile.read_sentences(args.src), goldfile.read_sentences(args.tgt)
    if len(sources) != len(targets):
        raise DataError(f"{args.src} has {len(sources)} lines but {args.tgt} has {len(targets)}; give aligned files")
    lengths = [(len(s), len(t)) for s, t in zip(sources, targets, strict=True)]
    gold = goldfile.read_gold(args.gold, lengths, args.format, args.one_based)
    model, reverse = load_models(args)
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
