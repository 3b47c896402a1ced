"""Do heads ranked against eflomal's links (silver) rank as they do against gold? Spearman's correlation of
the silver and gold AER rankings.

1. toy-fr: the 16 shipped toy-fr models, each with one cross-attention, taken as 16 "heads", forced through
   the toy-fr test split (500 pairs with sure/possible gold), links by argmax on words. Silver: eflomal
   (grow-diag-final-and, lowercased words) on the test pairs alone, and on the 10,000 train pairs plus them.
2. the tiny random Hugging Face models of the tests (tests/support/hf_models.py: Marian and T5, every
   layer x head), on their three sentence pairs with hand-made gold: a check that the pipeline runs end
   to end; three pairs and random weights say nothing about real heads.

eflomal's sampler is not seeded, so the figures move a little between runs. Run with one thread::

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/silver_heads.py \\
        --out benchmarks/results/silver_heads.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import attnviz
from attnviz.evaluation import measured_on
from attnviz.external import HeadRanking, hf_head_attention, load_hf, rank_heads, silver_links
from attnviz.links import gold_of_pairs, parse_pharaoh, word_attention

TINY_GOLD = ["0-0 1-2 2-1 3-3 4-4 5-5 6-6", "0-0 1-1 2-2 3-4 4-5 5-3 6-6 7-7 8-8", "0-0 1-1 2-2 3-3 4-4 5-5 6-6 7-7"]


def summary(ranking: HeadRanking, seconds: float) -> dict:
    best_gold = min(ranking.heads, key=lambda h: h.gold_aer)
    return {
        "spearman": None if ranking.spearman is None else round(ranking.spearman, 3),
        "top_by_silver": ranking.heads[0].name,
        "top_by_gold": best_gold.name,
        "aligning": ranking.aligning,
        "rule": ranking.rule,
        "eflomal_seconds": round(seconds, 1),
        "rows": ranking.to_dict()["rows"],
    }


def toy_fr() -> dict:
    names = [m.name for m in attnviz.list_models() if m.task == "toy-fr" and m.source == "pretrained"]
    models = [attnviz.load(name) for name in names]
    spec, options = measured_on(models[0].meta)
    corpus = attnviz.load_corpus(spec, **options)
    gold = gold_of_pairs(corpus.test, "toy-fr test split")
    sources, targets = gold.sources, gold.targets
    stacks = []
    for src, tgt in zip(sources, targets, strict=True):
        stacks.append(np.stack([word_attention(m, src, tgt).weights for m in models]))  # [models, tgt, src]
    train = [(list(p.source_tokens), list(p.target_tokens)) for p in corpus.train]
    out = {"pairs": len(sources), "heads": names, "silver": {}}
    for label, extra in (("test pairs only", []), ("train + test pairs", train)):
        start = time.perf_counter()
        silver = silver_links(sources, targets, extra)
        seconds = time.perf_counter() - start
        out["silver"][label] = summary(rank_heads(names, stacks, silver, gold.gold), seconds)
    return out


def tiny() -> dict:
    from tests.support.hf_models import SENTENCES, marian_folder, t5_folder

    sources, targets = [s.split() for s in SENTENCES[0::2]], [s.split() for s in SENTENCES[1::2]]
    gold = parse_pharaoh(TINY_GOLD, [(len(s), len(t)) for s, t in zip(sources, targets, strict=True)])
    start = time.perf_counter()
    silver = silver_links(sources, targets)
    seconds = time.perf_counter() - start
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind, build in (("marian", marian_folder), ("t5", t5_folder)):
            model = load_hf(build(Path(tmp, kind)), device="cpu")
            names, stacks = hf_head_attention(model, sources, targets)
            out[kind] = {"pairs": len(sources), **summary(rank_heads(names, stacks, silver, gold), seconds)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/silver_heads.json"))
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)  # the --out folder, before any work
    result = {"toy_fr": toy_fr(), "tiny_hf": tiny()}
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    for label, r in result["toy_fr"]["silver"].items():
        print(f"toy-fr, eflomal on {label}: Spearman {r['spearman']}, top {r['top_by_silver']} / {r['top_by_gold']}")
    for kind, r in result["tiny_hf"].items():
        print(f"tiny {kind}: Spearman {r['spearman']}")


if __name__ == "__main__":
    main()
