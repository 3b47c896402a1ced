"""AER of attention and of gradient attributions against gold links, and how far they agree.

For every shipped model of the tasks with gold links (toy-fr, dates), on the first ``--pairs``
test pairs: forced decoding on the reference, each target token linked to its argmax source
position (``<eos>`` row dropped, an argmax on source ``<eos>`` is no link:
``attnviz.evaluation.alignment_links``), for attention and for each attribution method; then corpus AER
and the mean per-step agreement of each method with attention (Spearman, top-1).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/attribution_aer.py --pairs 100

writes ``benchmarks/results/attribution_aer.json`` and ``.md``, rewritten after
each model; a rerun with the same settings measures only the models that are new or changed since
(delete the JSON to measure all again). A checkpoint still in training (no metrics) is skipped.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from attnviz import load_corpus
from attnviz.errors import InputError
from attnviz.evaluation import aer, alignment_links
from attnviz.explain.attribution import METHODS, attribute
from attnviz.store import catalog, pretrained_dir
from attnviz.store.checkpoint import read_header

HERE = Path(__file__).resolve().parent


def models(tasks: list[str]) -> list[tuple[str, str, Path]]:
    """(name, task, path) of the shipped models of these tasks: the manifest's, then any
    checkpoint in pretrained/ named after a task that the manifest does not list yet."""
    found = {m.name: (m.task, Path(m.path)) for m in catalog.list_models() if m.source == "pretrained"}
    for path in sorted(pretrained_dir().glob("*.safetensors")):
        task = next((t for t in tasks if path.stem.startswith(f"{t}-")), None)
        found.setdefault(path.stem, (task, path))
    return [(name, task, path) for name, (task, path) in sorted(found.items()) if task in tasks]


def fingerprint(path: Path) -> str:
    """Size and modification time: a rerun measures a checkpoint again once it changed."""
    stat = path.stat()
    return f"{stat.st_size}-{stat.st_mtime_ns}"


def measure(path: Path, pairs, methods: list[str], steps: int) -> dict:
    translator = catalog.load(str(path))
    links = {name: [] for name in ["attention", *methods]}
    rho = {m: [] for m in methods}
    top1 = {m: [] for m in methods}
    deltas, sure, possible, skipped = [], [], [], 0
    start = time.perf_counter()
    for pair in pairs:
        n_src, n_tgt = len(pair.source_tokens), len(pair.target_tokens)
        try:
            results = [attribute(translator, pair.source, pair.target, method=m, steps=steps) for m in methods]
        except InputError:
            skipped += 1
            continue
        al = results[0].alignment
        links["attention"].append(alignment_links(al, n_src, n_tgt))
        for m, a in zip(methods, results, strict=True):
            links[m].append(alignment_links(replace(al, weights=a.values), n_src, n_tgt))
            rho[m].extend(a.spearman[np.isfinite(a.spearman)].tolist())
            top1[m].extend(a.top1.tolist())
            if a.delta is not None:
                deltas.extend(np.abs(a.delta).tolist())
        sure.append(pair.sure)
        possible.append(pair.possible or pair.sure)
    return {
        "pairs": len(sure),
        "skipped": skipped,
        "seconds": round(time.perf_counter() - start, 1),
        "aer": {name: round(aer(hard, sure, possible), 4) for name, hard in links.items()},
        "spearman": {m: round(float(np.mean(v)), 4) if v else None for m, v in rho.items()},
        "top1": {m: round(float(np.mean(v)), 4) if v else None for m, v in top1.items()},
        "ig_abs_delta": {
            "mean": round(float(np.mean(deltas)), 4) if deltas else None,
            "median": round(float(np.median(deltas)), 4) if deltas else None,
        },
    }


def markdown(rows: dict, methods: list[str], n_pairs: int, steps: int) -> str:
    names = [{"ig": "IG", "gxi": "GxI", "occlusion": "occl."}[m] for m in methods]
    head = (
        "| model | AER attention | "
        + " | ".join(f"AER {n}" for n in names)
        + " | "
        + " | ".join(f"Spearman {n}" for n in names)
        + " | "
        + " | ".join(f"top-1 {n}" for n in names)
        + " | IG median abs(delta) |"
    )
    lines = [
        f"Forced decoding on the first {n_pairs} test pairs; integrated gradients with {steps} steps, zero-embedding "
        "baseline. AER: lower is better. Spearman and top-1: mean per-step agreement with attention.",
        "",
        head,
        "|" + " --- |" * (head.count("|") - 1),
    ]
    for name, r in rows.items():
        cells = [f"{r['aer']['attention']:.3f}"] + [f"{r['aer'][m]:.3f}" for m in methods]
        cells += [f"{r['spearman'][m]:+.2f}" if r["spearman"][m] is not None else "n/a" for m in methods]
        cells += [f"{r['top1'][m]:.0%}" for m in methods]
        cells.append(f"{r['ig_abs_delta']['median']:.3f}" if r["ig_abs_delta"]["median"] is not None else "n/a")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=500, help="first N test pairs of each task (default 500)")
    parser.add_argument("--tasks", nargs="+", default=["toy-fr", "dates"])
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--steps", type=int, default=32, help="integrated gradients steps")
    parser.add_argument("--models", nargs="*", help="only these model names")
    parser.add_argument("--out", default=str(HERE / "results" / "attribution_aer"), help="output path without suffix")
    args = parser.parse_args()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)  # the --out folder, before any work
    torch.set_num_threads(1)
    corpora = {t: load_corpus(t, n_train=10000, n_valid=500, n_test=500, seed=0).test[: args.pairs] for t in args.tasks}
    setup = {"pairs": args.pairs, "steps": args.steps, "methods": args.methods, "baseline": "zeros"}
    previous = Path(args.out + ".json")
    rows: dict[str, dict] = {}
    if previous.is_file() and json.loads(previous.read_text())["setup"] == setup:
        rows = json.loads(previous.read_text())["models"]  # a rerun measures only the models added since
    for name, task, path in models(args.tasks):
        if (args.models and name not in args.models) or rows.get(name, {}).get("checkpoint") == fingerprint(path):
            continue
        if not read_header(path).get("meta", {}).get("metrics"):
            print(name, "skipped: still training (a checkpoint saved after an epoch has no metrics yet)", flush=True)
            continue
        rows[name] = {"task": task, "checkpoint": fingerprint(path)}
        rows[name].update(measure(path, corpora[task], args.methods, args.steps))
        print(name, json.dumps(rows[name]), flush=True)
        rows = dict(sorted(rows.items()))
        Path(args.out + ".json").write_text(json.dumps({"setup": setup, "models": rows}, indent=2) + "\n")
        Path(args.out + ".md").write_text(markdown(rows, args.methods, args.pairs, args.steps))


if __name__ == "__main__":
    main()
