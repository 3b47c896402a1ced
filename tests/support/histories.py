"""A small alignment history as plain data (attnviz.training.history's to_dict), for the replay's tests."""

from __future__ import annotations

import numpy as np


def tiny_history(steps: list[int], per_epoch: int = 4, aer: bool = True) -> dict:
    """A history of one 2x3 probe whose attention moves onto its gold diagonal step by step."""
    points, weights = [], []
    for k, step in enumerate(steps):
        sharp = k / max(len(steps) - 1, 1)
        w = np.full((2, 3), (1 - sharp) / 3)
        w[0, 0] += sharp
        w[1, 1] += sharp
        weights.append(w.tolist())
        points.append(
            {
                "kind": "start" if step == 0 else "step",
                "step": step,
                "epoch": step // per_epoch + (step > 0),
                "epochs": step / per_epoch,
                "loss": None if step == 0 else 3.0 - sharp,
                "accuracy": None,
                "valid_loss": None,
                "aer": 1 - sharp if aer else None,
                "entropy": 1.0 - sharp,
                "seconds": step * 0.1,
            }
        )
    probe = {
        "role": "test",
        "source_tokens": ["a", "<b>", "<eos>"],
        "target_tokens": ["x", "<eos>"],
        "sure": [[0, 0]],
        "possible": [[0, 0]],
        "weights": weights,
    }
    return {"points": points, "probes": [probe]}
