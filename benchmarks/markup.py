"""How often does carried markup land on the right words? toy-fr's test split, which has gold links.

For each of the 500 test pairs the script draws (seeded) random spans of 1 to 4 contiguous source words,
every word with a sure gold link, wraps each in ``<b>..</b>`` and carries it into the reference
translation (:func:`attnviz.links.carry_markup`) along each aligner's links. A span is right when it lands
exactly on the gold target range: from the first to the last target word sure-linked to its words.

Aligners: every shipped toy-fr model's attention forced through the reference, by ``argmax`` and ``dtw``
(:func:`attnviz.links.align_corpus`), and eflomal as ``attnviz markup --method eflomal`` runs it (the first
2,000 training pairs plus the test pairs, quick settings; its sampler is not seeded). grow-diag-final needs
a model of the reverse direction, and toy-fr has no reverse task, so it is not measured here. Both split
rules are scored (``hull``: first to last linked word; ``block``: the largest contiguous run); the gold
links themselves give each rule's ceiling.

    OMP_NUM_THREADS=1 python benchmarks/markup.py --out benchmarks/results/markup.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import attnviz
from attnviz.links import SPLIT_RULES, align_corpus, carry_markup, eflomal_links, parse_markup, word_pairs
from attnviz.links.yardstick import SAMPLE_PAIRS

METHODS = ("argmax", "dtw")
MAX_SPAN = 4


def draw_spans(pairs, per_pair: int, seed: int) -> list[tuple[int, tuple[int, int], tuple[int, int]]]:
    """``(pair, source range, gold target range)`` for up to ``per_pair`` random spans a pair, each over
    contiguous source words that all have a sure gold link."""
    rng = random.Random(seed)
    spans = []
    for k, pair in enumerate(pairs):
        linked = {i for i, _ in pair.sure}
        n = len(pair.source_tokens)
        candidates = [
            (s, e)
            for s in range(n)
            for e in range(s + 1, min(n, s + MAX_SPAN) + 1)
            if all(i in linked for i in range(s, e))
        ]
        for s, e in rng.sample(candidates, min(per_pair, len(candidates))):
            targets = sorted({j for i, j in pair.sure if s <= i < e})
            spans.append((k, (s, e), (targets[0], targets[-1] + 1)))
    return spans


def score(pairs, spans, links_of_pair) -> dict:
    """The share of spans carried exactly onto their gold range, per split rule, with how often a span was
    split or had no linked word, and the pairs the aligner skipped."""
    right = dict.fromkeys(SPLIT_RULES, 0)
    split = unaligned = skipped = 0
    for k, source_range, gold in spans:
        links = links_of_pair[k]
        if links is None:
            skipped += 1
            continue
        pair = pairs[k]
        words = list(pair.source_tokens)
        s, e = source_range
        markup = parse_markup(" ".join([*words[:s], "<b>", *words[s:e], "</b>", *words[e:]]))
        for rule in SPLIT_RULES:
            span = carry_markup(markup, words, list(pair.target_tokens), links, None, rule).spans[0]
            right[rule] += span.target_words == gold
        split += "split" in span.flags
        unaligned += "unaligned" in span.flags
    n = len(spans)
    return {
        **{rule: round(right[rule] / n, 4) for rule in SPLIT_RULES},
        "split": round(split / n, 4),
        "unaligned": round(unaligned / n, 4),
        "skipped": skipped,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans-per-pair", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--models", nargs="*", help="model names (default: every shipped toy-fr model)")
    parser.add_argument("--out", help="write the figures here as JSON")
    args = parser.parse_args()
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)  # the --out folder, before any work
    torch.set_num_threads(1)
    corpus = attnviz.load_corpus("toy-fr", n_train=10000, n_valid=500, n_test=500, seed=0)
    pairs = corpus.test
    spans = draw_spans(pairs, args.spans_per_pair, args.seed)
    sources, targets = [list(p.source_tokens) for p in pairs], [list(p.target_tokens) for p in pairs]
    contiguous = sum(len({j for i, j in pairs[k].sure if s <= i < e}) == g[1] - g[0] for k, (s, e), g in spans)
    out = {
        "setup": {
            "pairs": len(pairs),
            "spans": len(spans),
            "seed": args.seed,
            "max_span_words": MAX_SPAN,
            "gold_range_contiguous": round(contiguous / len(spans), 4),
        },
        "grow-diag-final": "not measured: toy-fr has no reverse task, so no reverse model",
        "gold links": score(pairs, spans, [sorted(p.sure) for p in pairs]),
    }
    start = time.perf_counter()
    sample = word_pairs(corpus.train, SAMPLE_PAIRS)
    efl = eflomal_links([(s, t) for s, t in zip(sources, targets, strict=True)], sample)
    out["eflomal"] = {**score(pairs, spans, efl), "seconds": round(time.perf_counter() - start, 1)}
    print(json.dumps({"eflomal": out["eflomal"]}), flush=True)
    names = args.models or [m.name for m in attnviz.list_models() if m.task == "toy-fr" and m.source == "pretrained"]
    out["models"] = {}
    for name in names:
        model = attnviz.load(name)
        row = {}
        for method in METHODS:
            start = time.perf_counter()
            links = align_corpus(model, sources, targets, method).links
            row[method] = {**score(pairs, spans, links), "seconds": round(time.perf_counter() - start, 1)}
        out["models"][name] = row
        print(json.dumps({name: row}), flush=True)
    text = json.dumps(out, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
