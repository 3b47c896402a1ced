"""``attnviz align-report``: N sampled sentences of a corpus with their attention maps and word links, scored
against gold (AER) or, for data without gold, against eflomal's links (agreement), worst first, as one
self-contained HTML file."""

from __future__ import annotations

import argparse
import os
import shlex
import tempfile
from pathlib import Path

from attnviz.cli.options import add_device, int_in
from attnviz.errors import ConfigError, InputError
from attnviz.links import MAX_SAMPLE, REPORT_METHODS, REPORT_SPLITS, sample_alignments
from attnviz.plots import ReportSummary, report_html
from attnviz.store import load, model_roots, pretrained_dir

HELP = "an HTML report of N sampled sentences' attention maps and links, worst first"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``attnviz align-report``."""
    p.add_argument("--model", required=True, help="a model name or checkpoint path (a training's checkpoint too)")
    p.add_argument("--data", help="a data spec: toy-fr, multi30k-de-en, FILE?src=COL&tgt=COL (default: the model's)")
    p.add_argument("--split", default="train", choices=REPORT_SPLITS, help="default train")
    p.add_argument("--n", type=int_in(1, MAX_SAMPLE), default=50, help="sentences sampled (default 50)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    p.add_argument(
        "--method", choices=REPORT_METHODS, default="argmax", help="word links from attention (default argmax)"
    )
    p.add_argument("--out", required=True, help="the HTML file to write; never inside pretrained/")
    p.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    add_device(p)


def check_out(path: str | Path, force: bool = False) -> Path:
    """Refuse a report destination before any work: not ``.html``, inside ``pretrained/``, a folder,
    a missing folder, or an existing file without ``force``."""
    path = Path(path).expanduser()
    if path.suffix.lower() not in (".html", ".htm"):
        raise InputError(f"the report is an HTML file; name it {path.stem}.html, not {path.name!r}")
    if path.resolve().is_relative_to(pretrained_dir().resolve()):
        raise ConfigError(f"{path} is inside {pretrained_dir()}, the shipped models; write the report elsewhere")
    if path.is_dir():
        raise InputError(f"{path} is a folder; give a file name ending in .html")
    if not path.parent.resolve().is_dir():
        raise InputError(f"the folder {path.parent} does not exist; create it or choose another --out")
    if (path.exists() or path.is_symlink()) and not force:
        raise ConfigError(f"{path} already exists; add --force to overwrite it, or choose another --out")
    return path


def write_atomic(path: Path, text: str) -> None:
    """``text`` to ``path`` through a temporary file in the same folder, renamed over it: never half a file."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide the report from a web server or another user
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def run(args: argparse.Namespace) -> int:
    """Write the report; print where, with the mean score."""
    out = check_out(args.out, args.force)
    model = load(args.model, device=args.device, roots=model_roots(include_cwd=True))
    sample = sample_alignments(model, args.data, args.split, args.n, args.seed, args.method)
    command = ["attnviz", "align-report", "--model", args.model, "--data", sample.data, "--split", args.split]
    command += ["--n", str(args.n), "--seed", str(args.seed), "--method", args.method, "--out", str(args.out)]
    data = f"{sample.data} ({args.split} split)"
    summary = ReportSummary(args.model, data, args.method, sample.measure, shlex.join(command), sample.skipped)
    write_atomic(out, report_html(sample.sentences, summary))
    skipped = f", {sample.skipped} unreadable" * bool(sample.skipped)
    print(f"{out}: {len(sample.sentences)} sentences, mean {sample.measure} {sample.mean:.3f}{skipped}")
    return 0
