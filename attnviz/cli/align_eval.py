"""``attnviz align-eval``: precision, recall and AER of attention links against a gold alignment file, and
with ``--drift`` whether the links sit a consistent number of words off the gold (attnviz.links.drift)."""

from __future__ import annotations

import argparse
import sys

from attnviz.cli.adapting import adapted_models, add_adapt_arguments, yardstick_links
from attnviz.cli.align import add_method_arguments, load_models
from attnviz.cli.options import (
    MODEL_HELP,
    add_device,
    add_gold_convention,
    gold_base,
    gold_line,
    gold_summary,
    print_json,
)
from attnviz.cli.progress import counter
from attnviz.errors import InputError
from attnviz.links import (
    DRIFT_SIDES,
    DriftReport,
    align_corpus,
    check_pairs,
    corpus_drift,
    file_lines,
    is_bitext,
    read_gold,
    read_pairs,
    score_links,
    sentence_pairs,
    signed,
)
from attnviz.training import check_adapt_size

HELP = "precision, recall and AER of attention links against a gold file, and their drift"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``attnviz align-eval``."""
    parser.add_argument("--model", required=True, help=MODEL_HELP)
    parser.add_argument(
        "--src", help="source sentences, one a line, words separated by spaces; or a 'source ||| target' bitext alone"
    )
    parser.add_argument("--tgt", help="target sentences, line by line with --src (not with a bitext)")
    parser.add_argument("--bitext", help="a 'source ||| target' file, one pair a line (instead of --src and --tgt)")
    parser.add_argument("--gold", required=True, help="gold alignment file")
    add_gold_convention(parser)
    add_method_arguments(parser, default="argmax")
    parser.add_argument("--per-sentence", action="store_true", help="also list each sentence's scores")
    add_adapt_arguments(parser)
    parser.add_argument(
        "--yardstick",
        action="store_true",
        help="also align the same pairs with eflomal (grow-diag-final-and) and score it beside attention",
    )
    parser.add_argument(
        "--drift",
        action="store_true",
        help="also report whether the links sit a consistent number of words off the gold's sure links, and from "
        "which word on",
    )
    parser.add_argument(
        "--drift-side",
        choices=DRIFT_SIDES,
        default="source",
        help="the side whose index drifts (default source: the drift starts at a target word)",
    )
    add_device(parser)
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the scores as one JSON object (with how the gold was read, the pairs skipped, the drift)",
    )


def _text(args: argparse.Namespace) -> tuple[list[list[str]], list[list[str]], str, tuple[str, str]]:
    """The given words of each pair, how they were read, and the names of their files."""
    if args.bitext and (args.src or args.tgt):
        raise InputError("give either --bitext or --src (with --tgt), not both")
    path = args.bitext or args.src
    if not path:
        raise InputError("give the sentences: --bitext FILE ('source ||| target' lines), or --src and --tgt")
    if args.tgt is None:  # a bitext: its lines read once, checked, then split
        lines = file_lines(path)
        if not args.bitext and any(line.strip() for line in lines) and not is_bitext(lines):  # empty: said below
            raise InputError(f"{path} is not a 'source ||| target' bitext; give --tgt with the target sentences")
        sources, targets = sentence_pairs(lines, None, (str(path), None))
    else:
        sources, targets = read_pairs(path, args.tgt)
    names = (path, args.tgt) if args.tgt else (path, path)
    check_pairs(sources, targets, names)
    how = f"{path} and {args.tgt}, one sentence a line" if args.tgt else f"{path}, 'source ||| target' lines"
    return sources, targets, how, names


YARDSTICK_NOTE = (
    "note: eflomal samples without a seed (it takes one from the system), so its row moves between runs, "
    "the more so on few pairs; attention's row repeats"
)


def run(args: argparse.Namespace) -> int:
    """Align every pair of the text and print precision, recall and AER against ``--gold``."""
    args.base = gold_base(args)
    sources, targets, text, names = _text(args)
    if args.adapt:
        check_adapt_size(len(sources))  # before the gold file, whose reading takes long for as many lines
    lengths = [(len(s), len(t)) for s, t in zip(sources, targets, strict=True)]
    gold = read_gold(args.gold, lengths, args.format, args.base)
    for warning in gold.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    model, reverse = adapted_models(args, *load_models(args), sources, targets)
    with counter(" pairs", total=len(sources)) as done:
        aligned = align_corpus(model, sources, targets, args.method, reverse, args.threshold, done.update)
    for k, why in aligned.skipped.items():
        print(f"warning: {names[0]} line {k + 1} skipped: {why}", file=sys.stderr)
    corpus, per_sentence = score_links(aligned.links, gold.alignments)
    unk = aligned.with_unknown()
    result = {
        "model": args.model,
        "method": args.method,
        "n": aligned.aligned,
        "pairs": len(lengths),
        "skipped": [{"line": k + 1, "reason": why} for k, why in aligned.skipped.items()],
        "unk_pairs": len(unk),
        "gold": gold_summary(args.gold, gold),
        "text": text,
        **corpus.to_dict(),
    }
    if args.reverse_model:
        result["reverse_model"] = args.reverse_model
    if args.adapt:
        result["adapted"] = model.meta["adapted"]
    table = [{"aligner": _attention_name(args), **corpus.to_dict()}]
    if args.yardstick:
        print(YARDSTICK_NOTE, file=sys.stderr)
        eflomal_total, _ = score_links(yardstick_links(sources, targets), gold.alignments)
        table.append({"aligner": "eflomal grow-diag-final-and", **eflomal_total.to_dict()})
        result["table"] = table
    drift = None
    if args.drift:
        drift = corpus_drift(aligned.links, [g.sure for g in gold.alignments], lengths, args.drift_side)
        result["drift"] = drift.to_dict()
    if args.per_sentence:
        result["sentences"] = [c.to_dict() if c is not None else None for c in per_sentence]
        if drift is not None:
            for row, s in zip(result["sentences"], drift.sentences, strict=True):
                if row is not None:
                    row["drift"] = s.to_dict()
    if args.json:
        print_json(result)
        return 0
    print(gold_line(args.gold, gold, width=10))
    print(f"{'text':>10}: {text}")
    skipped = f", {len(aligned.skipped)} skipped (the model cannot read them)" if aligned.skipped else ""
    print(f"{'pairs':>10}: {aligned.aligned} of {len(lengths)} scored{skipped}; {len(unk)} hold a word read as <unk>")
    for key in ("model", "method", "n", "precision", "recall", "f1", "aer"):
        print(f"{key:>10}: {result[key]}")
    if args.yardstick:
        width = max(len(row["aligner"]) for row in table)
        print(f"\n{'aligner':<{width}}  precision  recall     AER")
        for row in table:
            print(f"{row['aligner']:<{width}}  {row['precision']:9.3f}  {row['recall']:6.3f}  {row['aer']:6.3f}")
    if drift is not None:
        _print_drift(drift)
    for n, c in enumerate(per_sentence if args.per_sentence else [], start=1):
        line = f"{n:>6}  skipped" if c is None else f"{n:>6}  P {c.precision:.3f}  R {c.recall:.3f}  AER {c.aer:.3f}"
        s = drift.sentences[n - 1] if drift is not None else None
        if s is not None and s.offset:
            line += f"  drift {signed(s.offset)} from {drift.positions} word {s.start}"
        print(line)
    return 0


def _attention_name(args: argparse.Namespace) -> str:
    """The attention row's name in the yardstick table: model, method, and how it was adapted."""
    adapted = f", adapted {args.adapt} steps{' guided' if args.adapt_guided else ''}" if args.adapt else ""
    return f"{args.model} {args.method}{adapted}"


def _print_drift(drift: DriftReport) -> None:
    """The corpus's drift against the gold's sure links: the summary, the histogram, the undecided pairs."""
    offsets = f"{signed(drift.offsets[0])}..{signed(drift.offsets[-1])}"
    print(f"{'drift':>10}: the {drift.side} index against the gold's sure links, offsets {offsets}: {drift.summary()}")
    print(f"{'offsets':>10}: " + "  ".join(f"{signed(d)}: {n}" for d, n in drift.histogram.items()))
    if drift.undecided:
        print(f"{'undecided':>10}: {len(drift.undecided)} pairs without predicted or without sure gold links")
