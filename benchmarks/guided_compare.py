"""Guided alignment against its plain twin on Multi30k de-en test_2016_flickr.

For each checkpoint: BLEU as its build measured it (beam from its recipe, on test and val), and on
forced decodes of the 1,000 test references the mean attention on the source ``<eos>`` column and
the mean attention entropy (rows of target words; the final ``<eos>`` row left out), and the
precision/recall/F1 of its argmax word links against eflomal's grow-diag-final-and links
(eflomal trained on train + test, as in benchmarks/alignment_yardstick.py).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/guided_compare.py \\
        pretrained/multi30k-de-en-additive-bahdanau.safetensors PLAIN.safetensors GUIDED.safetensors \\
        --out benchmarks/results/guided_results.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attnviz.evaluation import AlignmentCounts, alignment_counts
from attnviz.links import eos_column
from attnviz.links.extract import align_corpus
from attnviz.store import catalog
from benchmarks.alignment_yardstick import multi30k_reference


def attention_shape(model, pairs) -> dict:
    """Mean weight on the source <eos> column and mean row entropy (nats), target words' rows."""
    eos, entropy = [], []
    for al in model.align_batch([p.source for p in pairs], [p.target for p in pairs], log_probs=False):
        w = np.asarray(al.weights, dtype=np.float64)[:-1]  # [tgt words, src + 1]
        eos.extend(eos_column(al.weights, al.source_tokens, al.target_tokens))
        entropy.extend(-(w * np.log(np.clip(w, 1e-12, None))).sum(axis=1))
    return {"eos_mass": round(float(np.mean(eos)), 4), "entropy": round(float(np.mean(entropy)), 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", nargs="+")
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)  # the --out folder, before any work
    corpus, test, reference, facts = multi30k_reference()
    results = {**facts, "models": {}}
    for path in args.checkpoints:
        model = catalog.load(path)
        m = model.meta.get("metrics") or {}
        links = align_corpus(model, [s for s, _ in test], [t for _, t in test], "argmax").links
        agreement = sum(alignment_counts(links, reference), AlignmentCounts()).to_dict()
        row = {
            "guided": (model.meta.get("guided") or {}).get("weight", 0.0),
            "bleu": m.get("bleu"),
            "valid_bleu": (m.get("valid") or {}).get("bleu"),
            "beam": m.get("beam_size"),
            **attention_shape(model, corpus.test),
            "f1_vs_eflomal": round(agreement["f1"], 4),
            "precision": round(agreement["precision"], 4),
            "recall": round(agreement["recall"], 4),
            "train_seconds": model.meta.get("train_seconds"),
        }
        results["models"][str(path)] = row
        print(path, row, flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
