"""Speed of ``attnviz.attribute`` on a 20-token sentence, against Captum run one step at a time.

The sentence is the longest toy-fr test source (19 words + ``<eos>``), forced on its reference
(19 words + ``<eos>``: 20 target steps). For each model and method: the median wall time and
process CPU time of ``attribute()`` (decode, float32 copy, attribution, agreement) over
``--repeats`` runs; for integrated gradients also the plain way, Captum's
``IntegratedGradients`` called once per target step (a batch of ``steps`` sentences each).

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/attribution_speed.py
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from attnviz.explain.attribution import METHODS, Forced, attribute
from attnviz.store import catalog

SOURCE = "my dirty windows of my slow queen paint a clean book of the noisy soup with the fox."
REFERENCE = "mes fenêtres sales de ma reine lente peignent un livre propre de la soupe bruyante avec le renard."
MODELS = ["toy-fr-additive-bahdanau", "toy-fr-general-luong", "toy-fr-dot-luong", "toy-fr-location-luong"]


def timed(fn, repeats: int) -> dict:
    """Median wall and process-CPU seconds of ``fn()`` after one warm-up call."""
    fn()
    wall, cpu = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return {"wall": round(statistics.median(wall), 3), "cpu": round(statistics.median(cpu), 3)}


def captum_per_step(translator, steps: int) -> None:
    """The plain way: Captum's IntegratedGradients, one call (and backward) per target step."""
    from captum.attr import IntegratedGradients

    src = translator.source(SOURCE).ids
    tgt = translator.tgt_vocab.encode(translator.tgt_tokenizer.tokenize(REFERENCE), eos=True)
    forced = Forced.build(translator.model, src, tgt)
    x, b = forced.embeddings()[None], forced.baseline("zeros")[None]
    ig = IntegratedGradients(forced.log_prob_at)
    with torch.enable_grad():
        for t in range(len(tgt)):
            ig.attribute(x, b, additional_forward_args=(torch.tensor([t]),), n_steps=steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=MODELS)
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the app decodes with 1)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    for name in args.models:
        tr = catalog.load(name)
        row = {"model": name, "source_tokens": len(tr.source(SOURCE).ids), "threads": args.threads}
        for method in METHODS:
            row[method] = timed(lambda m=method, tr=tr: attribute(tr, SOURCE, REFERENCE, m, args.steps), args.repeats)
        row["ig_captum_per_step"] = timed(lambda tr=tr: captum_per_step(tr, args.steps), max(1, args.repeats // 2))
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
