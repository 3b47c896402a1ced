"""``attnviz markup``: translate a sentence with inline markup and carry its tags and placeholders into the
translation along word links; print the marked-up translation and where each element went."""

from __future__ import annotations

import argparse
from pathlib import Path

from attnviz.cli.align import load_models
from attnviz.cli.hf import _pick
from attnviz.cli.options import BEAM_HELP, MODEL_HELP, THRESHOLD_HELP, add_device, int_in, link_threshold, print_json
from attnviz.cli.streams import sentence
from attnviz.errors import InputError
from attnviz.external import hf_markup, load_hf
from attnviz.links import DIRECTIONAL, MARKUP_METHODS, SPLIT_RULES, MarkupResult, eflomal_sample, translate_markup

HELP = "carry a sentence's inline markup (<b>, <i>, <a href>, <br/>, {name}) into its translation by word links"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``attnviz markup``."""
    p.add_argument("--model", required=True, help=MODEL_HELP + ", or a Hugging Face model folder")
    p.add_argument(
        "--method",
        choices=MARKUP_METHODS,
        default="argmax",
        help="word links: from attention (argmax, threshold, dtw; the symmetric ones need "
        "--reverse-model) or from eflomal, trained on 2,000 pairs of the model's own data; "
        "default argmax",
    )
    p.add_argument("--reverse-model", help="the opposite direction's model (as --model), for the symmetric methods")
    p.add_argument("--threshold", type=link_threshold, default=0.3, help=THRESHOLD_HELP)
    p.add_argument(
        "--split",
        choices=SPLIT_RULES,
        default="hull",
        help="an element whose linked target words are not contiguous covers from the first to the last "
        "(hull) or the largest contiguous run (block); default hull",
    )
    p.add_argument("--target", type=sentence, help="carry the markup into this translation instead of the model's own")
    p.add_argument("--beam", type=int_in(1, 20), default=1, help=BEAM_HELP)
    p.add_argument("--layer", type=int_in(0, 1000), help="a Hugging Face model: decoder layer (default: all averaged)")
    p.add_argument("--head", type=int_in(0, 1000), help="a Hugging Face model: head of --layer")
    p.add_argument("--heads", help="a Hugging Face model: heads averaged, as layer:head pairs ('3:1 4:0')")
    add_device(p)
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.add_argument("source", type=sentence, help='the sentence with its markup, e.g. "the <b>black</b> cat"')


def _is_hf_folder(name: str) -> bool:
    path = Path(name).expanduser()
    return path.is_dir() and (path / "config.json").is_file()


def run(args: argparse.Namespace) -> int:
    """The marked-up translation and the span mapping, or the whole result as JSON."""
    if _is_hf_folder(args.model):
        if args.method not in DIRECTIONAL:
            raise InputError(f"a Hugging Face model's links come from {', '.join(DIRECTIONAL)}; change --method")
        model = load_hf(args.model, device=args.device)
        result = hf_markup(model, args.source, _pick(args), args.method, args.target, args.split, args.threshold)
    else:
        if args.layer is not None or args.head is not None or args.heads:
            raise InputError("--layer, --head and --heads choose a Hugging Face model's attention; drop them")
        model, reverse = load_models(args)
        sample = eflomal_sample(model) if args.method == "eflomal" else ()
        result = translate_markup(
            model, args.source, args.method, reverse, args.target, sample, args.split, args.threshold, args.beam
        )
    if args.json:
        print_json(result.to_dict())
    else:
        print_result(result)
    return 0


def _words(words: list[str], r: tuple[int, int]) -> str:
    """A word range as ``1-2 black cat``, or where an empty one sits."""
    start, end = r
    if start == end:
        return f"before {start}" if start < len(words) else "at the end"
    numbers = f"{start}" if end == start + 1 else f"{start}-{end - 1}"
    return f"{numbers} {' '.join(words[start:end])}"


def print_result(result: MarkupResult) -> None:
    """The marked-up translation, then one line per element: source words -> target words, flags
    (word numbers 0-based)."""
    print(result.marked_translation)
    if not result.spans:
        print("(no markup to carry)")
        return
    rows = [
        (
            s.element.label,
            _words(result.source_words, s.source_words),
            _words(result.target_words, s.target_words),
            " ".join(s.flags),
        )
        for s in result.spans
    ]
    head = ("element", "source words", "target words", "flags")
    widths = [max(len(row[k]) for row in [head, *rows]) for k in range(3)]
    print(f"links: {result.method}; split rule: {result.split}")
    for row in [head, *rows]:
        print(("  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths, strict=True)) + "  " + row[3]).rstrip())
