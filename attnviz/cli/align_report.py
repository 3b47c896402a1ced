"""``attnviz align-report``: N sampled sentences of a corpus with their attention maps and word links, scored
against gold (AER) or, for data without gold, against eflomal's links (agreement), worst first, as one
self-contained HTML file."""

from __future__ import annotations

import argparse
import os
import random
import shlex
import tempfile
from pathlib import Path

from attnviz.cli.options import add_device, int_in
from attnviz.data import Pair, join_pieces
from attnviz.errors import ConfigError, InputError
from attnviz.evaluation import measured_on
from attnviz.links import (
    SAMPLE_PAIRS,
    GoldAlignment,
    agreement,
    directional_links,
    eflomal_links,
    score_links,
    word_attention,
    word_pairs,
)
from attnviz.plots import ReportSentence, ReportSummary, report_html
from attnviz.store import load, model_roots, pretrained_dir

HELP = "an HTML report of N sampled sentences' attention maps and links, worst first"
METHODS = ("argmax", "dtw")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``attnviz align-report``."""
    p.add_argument("--model", required=True, help="a model name or checkpoint path (a training's checkpoint too)")
    p.add_argument("--data", help="a data spec: toy-fr, multi30k-de-en, FILE?src=COL&tgt=COL (default: the model's)")
    p.add_argument("--split", default="train", choices=["train", "valid", "test"], help="default train")
    p.add_argument("--n", type=int_in(1, 1000), default=50, help="sentences sampled (default 50)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    p.add_argument("--method", choices=METHODS, default="argmax", help="word links from attention (default argmax)")
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


def _words(pair: Pair) -> tuple[list[str], list[str]]:
    """The words a sentence is shown and scored in: the tokens gold indexes, else subword pieces joined."""
    if pair.has_gold:
        return list(pair.source_tokens), list(pair.target_tokens)
    return join_pieces(pair.source_tokens), join_pieces(pair.target_tokens)


def sentences(model, pairs: list[Pair], picked: list[int], method: str, train: list[Pair]) -> tuple[list, int]:
    """A :class:`ReportSentence` per picked pair the model reads as the pair's words; and how many it could not."""
    read = []
    for k in picked:
        src, tgt = _words(pairs[k])
        if not src or not tgt:
            continue
        try:
            reading = word_attention(model, src, tgt)
        except InputError:  # too long for the model
            continue
        if (len(reading.source_words), len(reading.target_words)) == (len(src), len(tgt)):
            read.append((k, src, tgt, reading.weights, sorted(directional_links(reading.weights, method))))
    gold = all(pairs[k].has_gold for k, *_ in read)
    if gold:
        out = []
        for k, src, tgt, weights, links in read:
            g = GoldAlignment()
            for link in pairs[k].possible or ():
                g.add(tuple(link), sure=False)
            for link in pairs[k].sure:
                g.add(tuple(link), sure=True)
            aer = score_links([links], [g])[0].aer
            out.append(ReportSentence(k, src, tgt, weights, links, aer, sorted(g.sure), sorted(g.possible)))
        return out, len(picked) - len(out)
    silver = eflomal_links([(src, tgt) for _, src, tgt, _, _ in read], word_pairs(train, SAMPLE_PAIRS)) if read else []
    out = []
    for (k, src, tgt, weights, links), e in zip(read, silver, strict=True):
        out.append(ReportSentence(k, src, tgt, weights, links, agreement(links, e), eflomal=e))
    return out, len(picked) - len(out)


def run(args: argparse.Namespace) -> int:
    """Write the report; print where, with the mean score."""
    from attnviz.data import load_corpus

    out = check_out(args.out, args.force)
    model = load(args.model, device=args.device, roots=model_roots(include_cwd=True))
    spec, options = measured_on(model.meta, args.data)
    corpus = load_corpus(spec, **options)
    pairs = corpus.split(args.split)
    if not pairs:
        raise InputError(f"the {args.split} split of {spec} is empty; choose another --split")
    picked = sorted(random.Random(args.seed).sample(range(len(pairs)), min(args.n, len(pairs))))
    report, skipped = sentences(model, pairs, picked, args.method, corpus.train)
    if not report:
        raise InputError(f"the model could read none of the {len(picked)} sampled pairs; check --data and --model")
    measure = "AER" if report[0].sure is not None else "agreement"
    command = ["attnviz", "align-report", "--model", args.model, "--data", spec, "--split", args.split]
    command += ["--n", str(args.n), "--seed", str(args.seed), "--method", args.method, "--out", str(args.out)]
    data = f"{spec} ({args.split} split)"
    summary = ReportSummary(args.model, data, args.method, measure, shlex.join(command), skipped)
    write_atomic(out, report_html(report, summary))
    mean = sum(s.score for s in report) / len(report)
    print(f"{out}: {len(report)} sentences, mean {measure} {mean:.3f}" + (f", {skipped} unreadable" * bool(skipped)))
    return 0
