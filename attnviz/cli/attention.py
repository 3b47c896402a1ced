"""``attnviz attention``: read attention files (JSON or NPZ, any toolkit), list their matrices, extract
word links, or score each matrix against a gold alignment file."""

from __future__ import annotations

import argparse

from attnviz.cli.options import (
    add_directional_method,
    add_gold_convention,
    gold_base,
    print_json,
    printable,
    score_json,
)
from attnviz.cli.progress import counter
from attnviz.external import matrix_names, read_attention_file, score_files, word_links
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


def run(args: argparse.Namespace) -> int:
    files = []
    with counter(" files", total=len(args.files)) as done:
        for path in args.files:
            files.append(read_attention_file(path))
            done.update()
    if args.gold:
        names = matrix_names(files, args.matrix)  # a corpus: the same matrices in every file
        corpus, _ = score_files(
            files, _gold_lines(args.gold), args.format, gold_base(args), args.method, args.threshold, names, args.gold
        )
        if args.json:
            print_json({"method": args.method, "n": len(files), "matrices": [score_json(row) for row in corpus]})
            return 0
        width = max(len(printable(n)) for n in names)
        pairs = f"{len(files)} pair{'s' if len(files) > 1 else ''}"
        print(f"{'matrix':<{width}}  precision  recall  AER    ({args.method}, {pairs})")
        for row in sorted(corpus, key=lambda r: r["AER"]):
            name = printable(row["aligner"])
            print(f"{name:<{width}}  {row['precision']:9.3f}  {row['recall']:6.3f}  {row['AER']:.3f}")
        return 0
    if args.matrix:
        matrix_names(files, args.matrix)  # each one named is in every file
    out = []
    for path, f in zip(args.files, files, strict=True):
        for name in args.matrix or list(f.alignments):  # listed: each file's own matrices
            al = f.alignments[name]
            wa = word_links(al, args.method, args.threshold)
            out.append({"file": path, "matrix": name, "shape": list(al.weights.shape), **wa.to_dict()})
    if args.json:
        print_json({"alignments": out, "metadata": [f.metadata for f in files]})
        return 0
    for row in out:
        file, matrix = printable(row["file"]), printable(row["matrix"])
        print(f"{file}  {matrix}  [{row['shape'][0]} x {row['shape'][1]}]  {row['pharaoh']}")
    return 0
