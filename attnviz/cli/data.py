"""``attnviz data``: print pairs as JSON lines, or a summary of a corpus."""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from attnviz.cli.options import print_json
from attnviz.data import TASKS, load_corpus, summarize_spec
from attnviz.errors import ConfigError

HELP = "print pairs of a data set (with gold links) or its summary"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``attnviz data``."""
    parser.add_argument(
        "spec",
        nargs="?",
        help=f"a task ({', '.join(TASKS)}), multi30k-de-en[@FOLDER], FILE?src=COL&tgt=COL or hf:NAME?src=COL&tgt=COL",
    )
    parser.add_argument("--task", metavar="NAME", help="a built-in task or any data spec (same as SPEC)")
    parser.add_argument("--split", default="test", help="train, valid or test (default test)")
    parser.add_argument("--n", type=int, default=10, help="how many pairs to print (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="seed of generation and sampling (default 0)")
    parser.add_argument(
        "--max-len", type=int, default=None, help="drop pairs longer than this, in tokens (default: no limit)"
    )
    parser.add_argument(
        "--json", action="store_true", help="print the pairs as JSON lines: the default output, so it changes nothing"
    )
    parser.add_argument("--summary", action="store_true", help="print a summary of the corpus instead")


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Print pairs or the summary; raise attnviz errors on bad input (the CLI exits 2)."""
    out = out or sys.stdout
    spec = args.spec or args.task
    if not spec:
        raise ConfigError("name the data: a task (e.g. --task dates) or a spec such as multi30k-de-en")
    if args.spec and args.task and args.spec != args.task:
        raise ConfigError(f"give either a spec ({args.spec!r}) or --task ({args.task!r}), not both")
    if args.n < 0:
        raise ConfigError(f"--n must be 0 or more, got {args.n}")
    if args.summary:  # a local table is read in chunks: memory stays bounded however long the file
        summary = summarize_spec(spec, seed=args.seed, max_len=args.max_len)
        for note in summary["notes"]:
            print(f"note: {note}", file=sys.stderr)
        print_json(summary, file=out, indent=2)
        return 0
    corpus = load_corpus(spec, seed=args.seed, max_len=args.max_len, split=args.split)  # that split alone
    for note in corpus.notes:
        print(f"note: {note}", file=sys.stderr)
    for pair in corpus.split(args.split)[: args.n]:
        print_json(pair.to_dict(), file=out)
    return 0
