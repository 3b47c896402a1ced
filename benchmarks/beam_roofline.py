"""How close beam search runs to the CPU's matrix-product rate, batched and one sentence at a time.

``evaluate`` and ``translate_batch`` decode with batched beam search; its speed-up over translating
one sentence at a time (``benchmarks/evaluate_speed.py``) is bounded by how much faster the same
matrix products run on a batch's rows than on one sentence's beam. This script decodes the first
N test pairs of a model both ways under torch's profiler (``with_flops``) and reports, for each
way, the floating-point operations of the matrix products (``addmm``, ``mm``, ``bmm``), the CPU
seconds they took and their rate; beside them, the rate of one large float32 product
(1024 x 1024 x 1024) and of the output layer's product at a batch's and at one beam's rows. The
ratio of the two ways' rates is what batching can gain on the products, the larger part of a step.

    OMP_NUM_THREADS=1 python benchmarks/beam_roofline.py --out benchmarks/results/beam_roofline.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("KINETO_LOG_LEVEL", "6")  # before torch: no profiler_start/stop lines on stderr

import torch
from torch.profiler import ProfilerActivity, profile

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from attnviz.devices import describe  # noqa: E402
from attnviz.evaluation.evaluate import own_pairs, translate_all  # noqa: E402
from attnviz.store import load  # noqa: E402

PRODUCTS = ("aten::addmm", "aten::mm", "aten::bmm")


def profiled(fn: Callable[[], object]) -> dict:
    """Matrix-product GFLOP, their CPU seconds and rate, and every operator's CPU seconds, of ``fn()``."""
    with profile(activities=[ProfilerActivity.CPU], with_flops=True) as prof:
        fn()
    events = prof.key_averages()
    flops = sum(e.flops for e in events if e.key in PRODUCTS)
    seconds = sum(e.self_cpu_time_total for e in events if e.key in PRODUCTS) / 1e6
    total = sum(e.self_cpu_time_total for e in events) / 1e6
    return {
        "product_gflop": round(flops / 1e9, 2),
        "product_seconds": round(seconds, 3),
        "product_gflops_per_s": round(flops / 1e9 / seconds, 1),
        "all_operators_seconds": round(total, 3),
        "product_share": round(seconds / total, 3),
    }


def sgemm_rate(m: int, k: int, n: int, seconds: float = 0.5) -> float:
    """GFLOP/s of a float32 ``[m, k] x [k, n]`` product, repeated for about ``seconds``."""
    a, b = torch.randn(m, k), torch.randn(k, n)
    a @ b
    reps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        a @ b
        reps += 1
    return round(2 * m * k * n * reps / (time.perf_counter() - start) / 1e9, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="multi30k-de-en-additive-bahdanau")
    parser.add_argument("--n", type=int, default=300, help="test pairs decoded")
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args()
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)  # the --out folder, before any work
    torch.set_num_threads(1)
    translator = load(args.model)
    pairs = own_pairs(translator, n=args.n)
    sources = [p.source for p in pairs]
    translate_all(translator, pairs[:20], beam_size=args.beam)  # warm-up
    batched = profiled(lambda: translate_all(translator, pairs, beam_size=args.beam))
    alone = profiled(lambda: [translator.translate(s, beam_size=args.beam) for s in sources])
    rows = 256  # about a batch's rows: 4,096 sentences x beams x source tokens, sources of ~16 tokens
    vocab = translator.model.decoder.embedding.num_embeddings
    emb = translator.config.emb_dim
    result = {
        "model": args.model,
        "pairs": args.n,
        "beam": args.beam,
        "machine": describe(torch.device("cpu")),  # one thread, set above
        "torch": torch.__version__,
        "batched beam": batched,
        "one sentence at a time": alone,
        "sgemm_gflops_per_s": {
            "1024 x 1024 x 1024": sgemm_rate(1024, 1024, 1024),
            f"output layer, batch rows [{rows}, {emb}] x [{emb}, {vocab}]": sgemm_rate(rows, emb, vocab),
            f"output layer, one beam [{args.beam}, {emb}] x [{emb}, {vocab}]": sgemm_rate(args.beam, emb, vocab),
        },
        "product_rate_ratio": round(batched["product_gflops_per_s"] / alone["product_gflops_per_s"], 2),
    }
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
