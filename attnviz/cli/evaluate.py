"""``attnviz evaluate``: BLEU, exact match, AER and entropy of one model or several."""

from __future__ import annotations

import argparse
import sys

from attnviz.cli.options import BEAM_HELP, DATA_SPEC, MODEL_HELP, add_device, add_keep_unk, int_in, print_json
from attnviz.devices import pick_device
from attnviz.errors import AttnvizError
from attnviz.store import model_roots

HELP = "BLEU, exact match, AER and entropy of a model"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``attnviz evaluate``."""
    p.add_argument(
        "--model",
        required=True,
        action="append",
        help=MODEL_HELP + "; repeat it to evaluate several (a broken one is reported, the others still measured)",
    )
    p.add_argument("--data", help=f"the data: {DATA_SPEC} (default: the model's own)")
    p.add_argument(
        "--split", default="test", choices=["train", "valid", "test"], help="the split measured (default test)"
    )
    p.add_argument(
        "--n", type=int_in(1, 1_000_000), default=None, help="evaluate the first N pairs only (default: all)"
    )
    p.add_argument("--beam", type=int_in(1, 20), default=1, help=BEAM_HELP)
    add_device(p)
    p.add_argument(
        "--json",
        action="store_true",
        help="print the metrics as one JSON object (several models: their results and errors)",
    )
    add_keep_unk(p)


def run(args: argparse.Namespace) -> int:
    """Print each model's metrics; exit 2 when any model could not be measured (the others still print)."""
    from attnviz.evaluation import evaluate_checkpoints, foreign_note

    pick_device(args.device)  # a device this machine lacks is one error, not one per model
    done = evaluate_checkpoints(
        args.model,
        data=args.data,
        split=args.split,
        n=args.n,
        beam_size=args.beam,
        replace_unk=not args.keep_unk,
        roots=model_roots(include_cwd=True),
        device=args.device,
    )
    if len(args.model) == 1 and done.errors:
        raise AttnvizError(done.errors[0]["error"])
    if args.json:
        print_json(done.rows[0] if len(args.model) == 1 else {"results": done.rows, "errors": done.errors})
    else:
        for k, row in enumerate(done.rows):
            print("\n" * (k > 0) + "\n".join(f"{key:>12}: {value}" for key, value in row.items()))
    for note in filter(None, map(foreign_note, done.rows)):
        print(f"attnviz evaluate: warning: {note} (leave out --data)", file=sys.stderr)
    for error in done.errors:  # the rows above are kept; each broken model is one line here
        print(f"attnviz evaluate: error: {error['model']}: {error['error']}", file=sys.stderr)
    return 2 if done.errors else 0
