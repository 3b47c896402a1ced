"""Where a toy-fr model's argmax links land against the gold source word (docs/models.md, "What the table
shows"): on it, one or two source words ahead of it (the word the decoder is about to translate),
or elsewhere. Forced decoding on the first 200 pairs (``--pairs``) of the model's own test split;
target words with sure links only.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/lookahead.py toy-fr-additive-bahdanau toy-fr-additive-luong
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attnviz.evaluation import alignment_links
from attnviz.evaluation.evaluate import own_pairs
from attnviz.store import catalog


def lookahead(name: str, n_pairs: int = 200) -> dict[str, float]:
    """Shares of a model's argmax links that hit the gold word, sit 1-2 words ahead, or elsewhere."""
    translator = catalog.load(name)
    pairs = own_pairs(translator, n=n_pairs)  # the test split the model was trained and measured on
    counts = {"hit": 0, "ahead": 0, "other": 0}
    forced = translator.align_batch([p.source for p in pairs], [p.target for p in pairs], log_probs=False)
    for pair, al in zip(pairs, forced, strict=True):
        gold: dict[int, set[int]] = {}
        for i, j in pair.sure:  # (source, target)
            gold.setdefault(j, set()).add(i)
        for i, j in alignment_links(al, len(pair.source_tokens), len(pair.target_tokens)):
            if j in gold:
                kind = "hit" if i in gold[j] else "ahead" if any(0 < i - g <= 2 for g in gold[j]) else "other"
                counts[kind] += 1
    total = sum(counts.values())
    return {k: round(v / total, 3) for k, v in counts.items()} | {"links": total}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "models", nargs="*", default=["toy-fr-additive-bahdanau"], help="toy-fr model names (default: %(default)s)"
    )
    parser.add_argument("--pairs", type=int, default=200, help="the first N test pairs (default: 200)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    for model in args.models:
        print(model, lookahead(model, args.pairs), flush=True)


if __name__ == "__main__":
    main()
