"""``attnviz translate``: translate a sentence and show its alignment."""

from __future__ import annotations

import argparse
import sys

from attnviz.cli.options import add_keep_unk, int_in, print_json
from attnviz.store import load, model_roots

HELP = "translate a sentence and show its alignment"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``attnviz translate``."""
    p.add_argument("--model", required=True, help="a model name (see `list`) or a .safetensors path")
    p.add_argument("--beam", type=int_in(1, 20), default=1)
    p.add_argument("--max-len", type=int_in(1, 1000), default=None)
    p.add_argument("--json", action="store_true", help="print the full trace as JSON")
    add_keep_unk(p)
    p.add_argument("text")


def run(args: argparse.Namespace) -> int:
    model = load(args.model, roots=model_roots(include_cwd=True))
    al = model.translate(args.text, beam_size=args.beam, max_len=args.max_len)
    replace_unk = not args.keep_unk
    if args.json:
        print_json({"translation": model.text_of(al, replace_unk), **al.to_dict()})
        return 0
    hyps = al.hypotheses or [al]
    for h in hyps:
        prefix = f"{h.log_prob:8.3f}  " if len(hyps) > 1 else ""
        print(prefix + model.text_of(h, replace_unk))
    print("alignment (source-target):", al.to_pharaoh())
    unknown = [t for t, u in zip(al.source_tokens, al.source_unknown, strict=True) if u]
    if unknown:
        print("unknown words:", ", ".join(unknown), file=sys.stderr)
    return 0
