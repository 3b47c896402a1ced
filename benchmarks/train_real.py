"""Training throughput of a recipe's model on its real data (Multi30k: needs ../shared/data).

Builds the model and batches exactly as ``attnviz.training.fit.fit`` does (same bucketing, padding,
loss, clipping, Adam), runs ``--warmup`` steps untimed and then ``--steps`` timed ones, and
reports real (non-padding) target tokens per second and the implied time of one epoch.

    python benchmarks/train_real.py --recipe pretrained/recipes/multi30k-de-en-additive-bahdanau.json --steps 20
    python benchmarks/train_real.py --recipe ... --threads 1 --precision bf16   # autocast mixed precision
    python benchmarks/train_real.py --recipe ... --guided   # plus the guided alignment loss
    python benchmarks/train_real.py --recipe ... --device cuda --precision bf16   # on a GPU
    python benchmarks/train_real.py --recipe ... --device cuda --graphs   # the decoder as CUDA graphs

``--graphs`` replays the Bahdanau decoder's recurrence as CUDA graphs (``attnviz.training.graphs``,
what ``fit`` does on a GPU). Each bucket shape is captured once, the first time a batch needs it;
before the clock starts, one forward and backward pass of every timed batch captures the shapes
the timed steps will need, so the steps are timed as in the rest of a training, and the capture's
time and the number of graphs are reported apart.

``--guided`` takes the links and weight from the recipe's ``guided`` field (else eflomal links
at the default weight) and reports apart the time to get the links (eflomal, or its cache) and
to build one epoch's batches with them.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attnviz.data.spec import load_corpus
from attnviz.devices import PRECISIONS, autocast, pick_device, training_precision
from attnviz.training.batches import make_batches
from attnviz.training.fit import _loss_and_accuracy, build_translator
from attnviz.training.graphs import graphs_apply, use_graphs
from attnviz.training.guided_links import GuidedConfig, training_links
from attnviz.training.recipes import Recipe


def synchronize(device: torch.device) -> None:
    """Wait for queued GPU work, so a timer reads finished steps (a no-op on the CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def capture_graphs(model: torch.nn.Module, graphs, batches: list, device: torch.device, smoothing: float) -> dict:
    """One forward and backward pass over ``batches`` (no optimiser step), so that ``graphs`` (the
    model's :class:`attnviz.training.graphs.RecurrenceGraphs`) hold every bucket they need before
    the clock starts; the capture's seconds and the number of graphs."""
    synchronize(device)
    start = time.perf_counter()
    for batch in batches:
        _loss_and_accuracy(model, batch, device, smoothing, 1.0)[0].backward()
    model.zero_grad(set_to_none=True)
    synchronize(device)
    return {"graph_capture_seconds": round(time.perf_counter() - start, 1), "graphs": len(graphs.graphs)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", required=True)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=None, help="instead of the recipe's")
    parser.add_argument("--precision", choices=PRECISIONS, default="fp32", help="bf16: autocast mixed precision")
    parser.add_argument("--guided", action="store_true", help="add the guided alignment loss (see above)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N, mps or auto")
    parser.add_argument("--graphs", action="store_true", help="the decoder recurrence as CUDA graphs (see above)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = pick_device(args.device)
    precision = training_precision(args.precision, device)
    recipe = Recipe.from_file(args.recipe)
    corpus = load_corpus(recipe.data, **recipe.data_options)
    tr = build_translator(corpus, min_freq=recipe.min_freq, max_vocab=recipe.max_vocab, seed=0, **recipe.model)
    model, batch_size = tr.model.to(device).train(), args.batch_size or recipe.train.get("batch_size", 64)
    smoothing = recipe.train.get("label_smoothing", 0.0)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, fused=device.type == "cuda")  # as fit
    guided, links, timings = (recipe.guided_config() or GuidedConfig()) if args.guided else None, None, {}
    if guided:
        start = time.perf_counter()
        links, _ = training_links(corpus, guided)
        timings["links_seconds"] = round(time.perf_counter() - start, 1)
    start = time.perf_counter()
    batches = make_batches(corpus.train, tr.src_vocab, tr.tgt_vocab, batch_size, random.Random(0), links)
    timings["batching_seconds"] = round(time.perf_counter() - start, 1)
    graphs = None
    if args.graphs:
        why_not = graphs_apply(model, device, precision, 1.0, 1)
        if why_not:
            sys.exit(f"train_real: CUDA graphs do not apply here: {why_not}")
        graphs = use_graphs(model)
        timings |= capture_graphs(model, graphs, batches[: args.warmup + args.steps], device, smoothing)
    tokens, start, aligns = 0, 0.0, []
    for i, batch in enumerate(batches[: args.warmup + args.steps]):
        if i == args.warmup:
            synchronize(device)
            tokens, start = 0, time.perf_counter()
        with autocast(device, precision):
            loss, _, n, align = _loss_and_accuracy(model, batch, device, smoothing, 1.0)
        if align is not None:
            aligns.append(align.item())
            loss = loss + guided.weight * align
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        tokens += n
    synchronize(device)
    seconds = time.perf_counter() - start
    per_epoch = sum(len(p.target_tokens) + 1 for p in corpus.train) / (tokens / seconds)
    result = {
        "recipe": recipe.name,
        "device": str(device),
        "threads": args.threads,
        "precision": precision,
        "cuda_graphs": bool(graphs),
        "batch_size": batch_size,
        "steps": args.steps,
        "guided_weight": guided.weight if guided else 0.0,
        **timings,
        "step_ms": round(1000 * seconds / args.steps),
        "target_tokens_per_s": round(tokens / seconds),
        "epoch_seconds": round(per_epoch),
        "steps_per_epoch": math.ceil(len(corpus.train) / batch_size),
    }
    if aligns:
        result["align_loss_first_last"] = [round(aligns[0], 3), round(aligns[-1], 3)]
    print(json.dumps(result) if args.json else "\n".join(f"{k:>20}: {v}" for k, v in result.items()))


if __name__ == "__main__":
    main()
