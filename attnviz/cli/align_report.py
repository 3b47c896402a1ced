"""``attnviz align-report``: N sampled sentences of a corpus with their attention maps and word links, scored
against gold (AER) or, for data without gold, against eflomal's links (agreement), worst first, as one
self-contained HTML file."""

from __future__ import annotations

import argparse
import shlex

from attnviz.cli.options import DATA_SPEC, MODEL_HELP, add_device, check_html_out, int_in, write_out
from attnviz.links import MAX_SAMPLE, REPORT_METHODS, REPORT_SPLITS, sample_alignments
from attnviz.plots import ReportSummary, report_html
from attnviz.store import load, model_roots

HELP = "an HTML report of N sampled sentences' attention maps and links, worst first"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``attnviz align-report``."""
    p.add_argument("--model", required=True, help=MODEL_HELP)
    p.add_argument("--data", help=f"the data: {DATA_SPEC} (default: the model's own)")
    p.add_argument("--split", default="train", choices=REPORT_SPLITS, help="the split sampled (default train)")
    p.add_argument("--n", type=int_in(1, MAX_SAMPLE), default=50, help="sentences sampled (default 50)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    p.add_argument(
        "--method",
        choices=REPORT_METHODS,
        default="argmax",
        help="word links from attention: argmax per target word, or dtw (Whisper's monotonic path); default argmax",
    )
    p.add_argument("--out", required=True, help="the HTML file to write; never inside pretrained/")
    p.add_argument("--force", action="store_true", help="overwrite --out if it exists or appears while this runs")
    add_device(p)


def run(args: argparse.Namespace) -> int:
    """Write the report; print where, with the mean score."""
    out = check_html_out(args.out, args.force)
    model = load(args.model, device=args.device, roots=model_roots(include_cwd=True))
    sample = sample_alignments(model, args.data, args.split, args.n, args.seed, args.method)
    command = ["attnviz", "align-report", "--model", args.model, "--data", sample.data, "--split", args.split]
    command += ["--n", str(args.n), "--seed", str(args.seed), "--method", args.method, "--out", str(args.out)]
    data = f"{sample.data} ({args.split} split)"
    summary = ReportSummary(args.model, data, args.method, sample.measure, shlex.join(command), sample.skipped)
    write_out(out, report_html(sample.sentences, summary), args.force)
    skipped = f", {sample.skipped} unreadable" * bool(sample.skipped)
    n = len(sample.sentences)
    fewer = f" (all the {args.split} split has)" * (n + sample.skipped < args.n)
    print(f"{out}: {n} sentence{'s' * (n != 1)}{fewer}, mean {sample.measure} {sample.mean:.3f}{skipped}")
    return 0
