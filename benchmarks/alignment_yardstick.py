"""How good are attention alignments? AER on toy-fr gold, and agreement with eflomal on Multi30k.

1. toy-fr (500 test pairs with sure/possible gold): AER of eflomal (trained on the 10,000 train
   pairs plus the test pairs) and of every shipped toy-fr model's attention, forced through the
   reference: ``evaluate`` (the token argmax, a step on ``<eos>`` gets no link, as
   ``attnviz evaluate`` reports) and ``attnviz.links.extract`` (``<eos>`` hidden, argmax and threshold).
2. Multi30k test_2016_flickr (1,000 pairs, no gold): precision/recall/F1 of the de-en model's
   attention (argmax, and grow-diag-final with the en-de model as the reverse direction) taking
   eflomal's grow-diag-final-and links (trained on train + test) as the reference.

eflomal's sampler is not seeded, so its figures move a little between runs. Run with one thread
on a shared machine::

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/alignment_yardstick.py --out benchmarks/results/alignment_results.json
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
from attnviz.data.tokenize import Tokenizer
from attnviz.evaluation import AlignmentCounts, alignment_counts, alignment_links
from attnviz.links import eflomal as eflomal_align
from attnviz.links.extract import align_corpus

EFLOMAL_METHODS = ("forward", "reverse", "intersection", "grow-diag-final-and", "grow-diag-final")
DE_EN, EN_DE = "multi30k-de-en-additive-bahdanau", "multi30k-en-de-additive-bahdanau"


def counts(links, sure, possible=None) -> dict:
    return sum(alignment_counts(links, sure, possible), AlignmentCounts()).to_dict()


def toy_fr() -> dict:
    corpus = attnviz.load_corpus("toy-fr", n_train=10000, n_valid=500, n_test=500, seed=0)
    test = corpus.test
    sure, possible = [p.sure for p in test], [p.possible for p in test]
    pairs = [(p.source_tokens, p.target_tokens) for p in test]
    train = [(p.source_tokens, p.target_tokens) for p in corpus.train]
    out = {"n": len(test), "eflomal": {}, "attention": {}}
    for method in EFLOMAL_METHODS:
        start = time.perf_counter()
        links = eflomal_align.run_eflomal(pairs, train, method=method)
        out["eflomal"][method] = {**counts(links, sure, possible), "seconds": round(time.perf_counter() - start, 1)}
    models = [m.name for m in attnviz.list_models() if m.task == "toy-fr" and m.source == "pretrained"]
    for name in models:
        model = attnviz.load(name)
        start = time.perf_counter()
        as_evaluate = [
            alignment_links(al, len(p.source_tokens), len(p.target_tokens))
            for p, al in zip(
                test,
                model.align_batch([p.source for p in test], [p.target for p in test], log_probs=False),
                strict=True,
            )
        ]
        sources, targets = [p.source_tokens for p in test], [p.target_tokens for p in test]
        row = {"evaluate": counts(as_evaluate, sure, possible)}
        row["argmax"] = counts(align_corpus(model, sources, targets, "argmax").links, sure, possible)
        row["threshold-0.3"] = counts(align_corpus(model, sources, targets, "threshold").links, sure, possible)
        row["seconds"] = round(time.perf_counter() - start, 1)
        out["attention"][name] = row
    return out


def multi30k_reference():
    """de-en's corpus, its test pairs as words and eflomal's grow-diag-final-and links for them
    (trained on train + test), with the facts of that run."""
    corpus = attnviz.load_corpus("multi30k-de-en")
    words = Tokenizer("word", lowercase=False).split  # the models' word cut, before subword pieces
    test = [(words(p.source), words(p.target)) for p in corpus.test]
    train = [(words(p.source), words(p.target)) for p in corpus.train]
    start = time.perf_counter()
    reference = eflomal_align.run_eflomal(test, train, method="grow-diag-final-and")
    facts = {"n": len(test), "n_train": len(train), "eflomal_seconds": round(time.perf_counter() - start, 1)}
    return corpus, test, reference, facts


def multi30k() -> dict:
    _, test, reference, out = multi30k_reference()
    forward, reverse = attnviz.load(DE_EN), attnviz.load(EN_DE)
    sources, targets = [s for s, _ in test], [t for _, t in test]
    for method, rev in (("argmax", None), ("grow-diag-final", reverse), ("intersection", reverse)):
        start = time.perf_counter()
        links = align_corpus(forward, sources, targets, method, rev).links
        out[method] = {**counts(links, reference), "seconds": round(time.perf_counter() - start, 1)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["toy-fr", "multi30k", "all"], default="all")
    parser.add_argument("--out", help="write the figures here as JSON (updating the parts that ran)")
    args = parser.parse_args()
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)  # the --out folder, before any work
    torch.set_num_threads(1)
    path = Path(args.out) if args.out else None
    results = json.loads(path.read_text(encoding="utf-8")) if path and path.exists() else {}  # parts run alone add up
    if args.part in ("toy-fr", "all"):
        results["toy-fr"] = toy_fr()
    if args.part in ("multi30k", "all"):
        results["multi30k-de-en"] = multi30k()
    text = json.dumps(results, indent=2)
    print(text)
    if path:
        path.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
