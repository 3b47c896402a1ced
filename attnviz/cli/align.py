"""``attnviz align``: force the decoder through a translation and show its attention, or word links from it."""

from __future__ import annotations

import argparse

from attnviz.cli.adapting import adapted_models, add_adapt_arguments
from attnviz.cli.options import MODEL_HELP, THRESHOLD_HELP, add_device, link_threshold, print_json
from attnviz.cli.streams import sentence
from attnviz.decoding import Translator
from attnviz.errors import InputError
from attnviz.links import METHODS, SYMMETRIC, align_words
from attnviz.store import load, model_roots

HELP = "force the decoder through a translation and show its attention"


def add_method_arguments(parser: argparse.ArgumentParser, default: str | None) -> None:
    """``--method``, ``--reverse-model`` and ``--threshold``."""
    parser.add_argument(
        "--method",
        choices=METHODS,
        default=default,
        help="word links: argmax per target word, every weight >= --threshold, dtw (Whisper's monotonic path), "
        "or both directions combined (the others; need --reverse-model); "
        + (f"default {default}" if default else "default: no word links, the raw token-level argmax"),
    )
    parser.add_argument(
        "--reverse-model", help="the opposite direction's model (as --model), for the symmetric methods"
    )
    parser.add_argument("--threshold", type=link_threshold, default=0.3, help=THRESHOLD_HELP)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``attnviz align``."""
    p.add_argument("--model", required=True, help=MODEL_HELP)
    p.add_argument(
        "--json", action="store_true", help="print the full trace as JSON (with --method: the word links as JSON)"
    )
    add_method_arguments(p, default=None)
    add_device(p)
    add_adapt_arguments(p)
    p.add_argument("source", type=sentence, help="the source sentence")
    p.add_argument("target", type=sentence, help="its translation, which the decoder is forced through")


def run(args: argparse.Namespace) -> int:
    """The raw token-level argmax links (or the full trace as JSON); word links with ``--method``."""
    if args.method or args.reverse_model:
        return _word_links(args)
    model = load(args.model, device=args.device, roots=model_roots(include_cwd=True))
    model, _ = adapted_models(args, model, None, [args.source.split()], [args.target.split()])
    al = model.align(args.source, args.target)
    if args.json:
        print_json(al.to_dict())
    else:
        print(al.to_pharaoh())
    return 0


def load_models(args: argparse.Namespace) -> tuple[Translator, Translator | None]:
    """``--model`` and ``--reverse-model`` (None without it) on ``--device``; the reverse model only for the
    symmetric methods."""
    roots = model_roots(include_cwd=True)
    if args.reverse_model and args.method not in SYMMETRIC:
        raise InputError(f"--reverse-model is used by {', '.join(SYMMETRIC)} only; drop it or change --method")
    reverse = load(args.reverse_model, device=args.device, roots=roots) if args.reverse_model else None
    return load(args.model, device=args.device, roots=roots), reverse


def _word_links(args: argparse.Namespace) -> int:
    """``align --method M``: the word links as a Pharaoh line, or JSON."""
    model, reverse = adapted_models(args, *load_models(args), [args.source.split()], [args.target.split()])
    wa = align_words(model, args.source, args.target, args.method, reverse, args.threshold)
    if args.json:
        print_json(wa.to_dict())
    else:
        print(wa.to_pharaoh())
    return 0
