"""Training step with attnviz's fused loss vs PyTorch's, at Multi30k-like sizes, alternated.

Run from the repository root::

    .venv/bin/python benchmarks/loss_ab.py [--rounds 4] [--steps 6] [--threads 1]

A dot/Luong model (emb 128, hidden 256) on random padded batches of 128 sentences of 8 to 25
tokens with a 6,800-word target vocabulary (Multi30k en-fr at min_freq 2), label smoothing
0.1. Each round times ``--steps`` steps with ``nn.CrossEntropyLoss`` plus a separate argmax
for accuracy (PyTorch's way), then with :func:`attnviz.training.loss.smoothed_cross_entropy`
(attnviz's trainer: the same loss and gradient, see tests/unit/training/test_loss.py). Prints the median
target tokens per second of each and the ratio.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from attnviz.data.vocab import PAD_ID
from attnviz.model.config import ModelConfig
from attnviz.model.seq2seq import build_model
from attnviz.training.loss import smoothed_cross_entropy

VOCAB, BATCH, SMOOTHING = 6800, 128, 0.1


def random_batches(n: int, seed: int = 0) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(n):
        lengths = torch.randint(8, 26, (BATCH,), generator=g)  # [B]
        src = torch.randint(4, VOCAB, (BATCH, int(lengths.max())), generator=g)  # [B, S]
        src[torch.arange(src.size(1)) >= lengths.unsqueeze(1)] = PAD_ID
        tgt = torch.randint(4, VOCAB, (BATCH, int(lengths.max()) + 2), generator=g)  # [B, T + 1]
        tgt[torch.arange(tgt.size(1)) > lengths.unsqueeze(1) + 1] = PAD_ID
        batches.append((src, lengths, tgt))
    return batches


def pytorch_loss(logits, gold):
    loss = nn.functional.cross_entropy(logits, gold, ignore_index=PAD_ID, label_smoothing=SMOOTHING)
    return loss, logits.argmax(-1)


def attnviz_loss(logits, gold):
    return smoothed_cross_entropy(logits, gold, SMOOTHING, PAD_ID)


def tokens_per_second(model, optimizer, loss_fn, batches) -> float:
    start, tokens = time.perf_counter(), 0
    for src, lengths, tgt in batches:
        logits = model(src, lengths, tgt[:, :-1]).logits  # [B, T, V]
        gold = tgt[:, 1:].reshape(-1)
        loss, predicted = loss_fn(logits.reshape(-1, VOCAB), gold)
        int(((predicted == gold) & (gold != PAD_ID)).sum())  # accuracy, as the trainer counts it
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        tokens += int((gold != PAD_ID).sum())
    return tokens / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    cfg = ModelConfig(VOCAB, VOCAB, score="dot", style="luong", emb_dim=128, hidden_dim=256, tie_embeddings=True)
    model = build_model(cfg, seed=0).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    batches = random_batches(args.rounds * args.steps + 2)
    tokens_per_second(model, optimizer, attnviz_loss, batches[:2])  # warm-up
    results: dict[str, list[float]] = {"pytorch": [], "attnviz": []}
    for r in range(args.rounds):
        chunk = batches[2 + r * args.steps : 2 + (r + 1) * args.steps]
        for name, fn in (("pytorch", pytorch_loss), ("attnviz", attnviz_loss)):
            results[name].append(tokens_per_second(model, optimizer, fn, chunk))
    medians = {name: statistics.median(v) for name, v in results.items()}
    for name, value in medians.items():
        print(f"{name:<8} {value:8.0f} target tokens/s (rounds: {', '.join(f'{v:.0f}' for v in results[name])})")
    print(f"attnviz / pytorch: {medians['attnviz'] / medians['pytorch']:.2f}x ({args.threads} threads)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
