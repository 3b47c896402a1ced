"""``attnviz attention``: read attention files (JSON or NPZ, any toolkit), list their matrices, extract
word links, or score each matrix against a gold alignment file."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

from tqdm import tqdm

from attnviz.cli.options import (
    add_directional_method,
    add_gold_convention,
    gold_base,
    print_json,
    printable,
    score_json,
)
from attnviz.cli.progress import counter
from attnviz.external import AttentionFile, check_names, read_attention_file, score_files, word_links
from attnviz.links import file_lines

HELP = "read attention files from any toolkit: their matrices, word links, AER against gold"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``attnviz attention``."""
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="attention files (.json or .npz, see docs/your-model.md), one sentence pair each, in the "
        "order of the gold file's pairs",
    )
    p.add_argument(
        "--matrix", action="append", metavar="NAME", help="only this matrix (repeat for several; default: all of them)"
    )
    add_directional_method(p)
    p.add_argument("--gold", help="a gold alignment file (one pair per attention file): score each matrix")
    add_gold_convention(p)
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")


def _gold_lines(path: str) -> list[str]:
    """The gold file's lines (a missing, oversized or undecodable file: exit 2 naming it)."""
    return file_lines(path)


def _files(paths: list[str], done: tqdm) -> Iterator[AttentionFile]:
    """Each attention file in turn, read when it is wanted and counted in ``done``: one file's matrices
    in memory at a time."""
    for path in paths:
        f = read_attention_file(path)
        done.update()
        yield f


def run(args: argparse.Namespace) -> int:
    """Score the files against the gold file, or list each file's matrices; the files read counted on
    standard error where a person watches it (the count closed before any error is said)."""
    with counter(" files", total=len(args.files)) as done:
        return _run(args, _files(args.files, done))


def _run(args: argparse.Namespace, files: Iterator[AttentionFile]) -> int:
    if args.gold:
        corpus, _ = score_files(
            files,
            _gold_lines(args.gold),
            args.format,
            gold_base(args),
            args.method,
            args.threshold,
            args.matrix,
            args.gold,
        )
        if args.json:
            print_json({"method": args.method, "n": len(args.files), "matrices": [score_json(row) for row in corpus]})
            return 0
        width = max(len(printable(row["aligner"])) for row in corpus)
        pairs = f"{len(args.files)} pair{'s' if len(args.files) > 1 else ''}"
        print(f"{'matrix':<{width}}  precision  recall  AER    ({args.method}, {pairs})")
        for row in sorted(corpus, key=lambda r: r["AER"]):
            name = printable(row["aligner"])
            print(f"{name:<{width}}  {row['precision']:9.3f}  {row['recall']:6.3f}  {row['AER']:.3f}")
        return 0
    out, metadata = [], []  # JSON: the rows of every file; text: each file's rows, printed once it is read
    for k, path in enumerate(args.files, start=1):
        f = next(files)
        if args.matrix:
            check_names(f, args.matrix, k)  # each one named is in every file
        rows = []
        for name in args.matrix or list(f.alignments):  # listed: each file's own matrices
            al = f.alignments[name]
            wa = word_links(al, args.method, args.threshold)
            rows.append({"file": path, "matrix": name, "shape": list(al.weights.shape), **wa.to_dict()})
        if args.json:
            out += rows
            metadata.append(f.metadata)
            continue
        for row in rows:
            file, matrix = printable(row["file"]), printable(row["matrix"])
            print(f"{file}  {matrix}  [{row['shape'][0]} x {row['shape'][1]}]  {row['pharaoh']}")
        sys.stdout.flush()  # a reader down a pipe gets each file's rows as it is read
    if args.json:
        print_json({"alignments": out, "metadata": metadata})
    return 0
