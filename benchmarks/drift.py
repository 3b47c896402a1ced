"""Do attention's links drift? ``attnviz.links.drift`` on the shipped models.

1. toy-fr: every shipped toy-fr model's argmax links (``attnviz.links`` extraction, ``<eos>`` hidden) on
   its own 500 test pairs, forced through the reference, against the gold's sure links; eflomal's
   grow-diag-final-and links (trained on the 10,000 training pairs plus the test pairs) beside them; and a
   planted control, the gold's own sure links moved one source word on from each sentence's middle
   target word (``n // 2``).
2. Multi30k de-en test_2016_flickr (1,000 pairs, no gold): a few de-en models' argmax links against
   eflomal's grow-diag-final-and links (trained on the 29,000 training pairs plus the test pairs).

The source index is shifted (offsets -3..+3, a drift wins two links or more); each row gives the
histogram's dominant offset and its share, the most common drift with its share and median start, and
the share of all links that agree one and two words ahead (+1, +2) and one behind (-1). eflomal's
sampler is not seeded, so its rows move a little between runs. Run with one thread::

    OMP_NUM_THREADS=1 python benchmarks/drift.py --out benchmarks/results/drift.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import attnviz
from attnviz.evaluation import metrics
from attnviz.links import DriftReport, align_corpus, corpus_drift, run_eflomal, signed

MULTI30K = (
    "multi30k-de-en-additive-bahdanau",
    "multi30k-de-en-additive-luong",
    "multi30k-de-en-general-luong",
    "multi30k-de-en-additive-bahdanau-guided",
)


def row(report: DriftReport, seconds: float, **extra) -> dict:
    agreement = report.agreement
    return {
        **extra,
        "dominant": report.dominant,
        "share": round(report.share, 3),
        "drift": report.drift,
        "drift_share": round(report.drift_share, 3),
        "start": report.start,
        "relative_start": None if report.relative_start is None else round(report.relative_start, 2),
        "histogram": {signed(d): n for d, n in report.histogram.items()},
        "agree": {signed(d): round(agreement[d], 3) for d in (-1, 0, 1, 2)},
        "decided": report.decided,
        "seconds": round(seconds, 1),
    }


def aer(links, test) -> float:
    counts = sum(
        metrics.alignment_counts(links, [p.sure for p in test], [p.possible for p in test]), metrics.AlignmentCounts()
    )
    return round(counts.aer, 3)


def toy_fr() -> dict:
    corpus = attnviz.load_corpus("toy-fr", n_train=10000, n_valid=500, n_test=500, seed=0)
    test = corpus.test
    sources, targets = [p.source_tokens for p in test], [p.target_tokens for p in test]
    sure, lengths = [sorted(p.sure) for p in test], [(len(s), len(t)) for s, t in zip(sources, targets, strict=True)]
    out = {"n": len(test), "reference": "gold sure links", "models": {}}
    names = [m.name for m in attnviz.list_models() if m.task == "toy-fr" and m.source == "pretrained"]
    for name in names:
        start = time.perf_counter()
        links = align_corpus(attnviz.load(name), sources, targets, "argmax").links
        report = corpus_drift(links, sure, lengths)
        out["models"][name] = row(report, time.perf_counter() - start, aer=aer(links, test))
        print(name, out["models"][name], flush=True)
    start = time.perf_counter()
    train = [(p.source_tokens, p.target_tokens) for p in corpus.train]
    links = run_eflomal(list(zip(sources, targets, strict=True)), train, method="grow-diag-final-and")
    out["eflomal"] = row(corpus_drift(links, sure, lengths), time.perf_counter() - start, aer=aer(links, test))
    middle = [len(t) // 2 for t in targets]
    planted = [
        [(i + 1, j) if j >= c else (i, j) for i, j in s if j < c or i + 1 < n_src]
        for s, c, (n_src, _) in zip(sure, middle, lengths, strict=True)
    ]
    report = corpus_drift(planted, sure, lengths)
    exact = sum(s.offset == 1 and s.start == c for s, c in zip(report.sentences, middle, strict=True))
    out["planted +1 from the middle word"] = row(report, 0.0, exact=round(exact / len(test), 3))
    return out


def multi30k() -> dict:
    from alignment_yardstick import multi30k_reference  # the same eflomal reference as the yardstick

    _, test, reference, facts = multi30k_reference()
    sources, targets = [s for s, _ in test], [t for _, t in test]
    lengths = [(len(s), len(t)) for s, t in test]
    out = {**facts, "reference": "eflomal grow-diag-final-and", "models": {}}
    for name in MULTI30K:
        start = time.perf_counter()
        links = align_corpus(attnviz.load(name), sources, targets, "argmax").links
        out["models"][name] = row(corpus_drift(links, reference, lengths), time.perf_counter() - start)
        print(name, out["models"][name], flush=True)
    return out


def _start(r: dict) -> str:
    return f"word {r['start']:g} ({r['relative_start']:.0%} in)"


def table(results: dict) -> str:
    """The rows as the Markdown table of docs/results.md."""
    lines = [
        "| links | against | dominant (share) | drift (share), median start | agree -1 / 0 / +1 / +2 |",
        "|---|---|---|---|---|",
    ]
    for part in results.values():
        rows = {**part["models"], **{k: v for k, v in part.items() if isinstance(v, dict) and "dominant" in v}}
        for name, r in rows.items():
            drift = "none" if r["drift"] is None else f"{signed(r['drift'])} ({r['drift_share']:.1%}), {_start(r)}"
            agree = " / ".join(f"{r['agree'][k]:.3f}" for k in ("-1", "0", "+1", "+2"))
            lines.append(
                f"| {name} | {part['reference']} | {signed(r['dominant'])} ({r['share']:.1%}) | {drift} | {agree} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["toy-fr", "multi30k", "all"], default="all")
    parser.add_argument("--out", help="write the figures here as JSON (updating the parts that ran)")
    args = parser.parse_args()
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)  # the --out folder, before any work
    torch.set_num_threads(1)
    path = Path(args.out) if args.out else None
    results = json.loads(path.read_text(encoding="utf-8")) if path and path.exists() else {}
    if args.part in ("toy-fr", "all"):
        results["toy-fr"] = toy_fr()
    if args.part in ("multi30k", "all"):
        results["multi30k-de-en"] = multi30k()
    if path:
        path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(table(results))


if __name__ == "__main__":
    main()
