"""The alignment history of a training: a few probe pairs' attention at recorded points.

A probe is a source sentence forced through a fixed target (its reference), so its attention
keeps one shape ``[target tokens, source tokens]`` (each side ending with ``<eos>``) from the
untrained model to the last epoch, and can be scored against gold links when it has them.
:mod:`attnviz.training.history` records it, :mod:`attnviz.store.history` stores it in the
checkpoint, and :meth:`AlignmentHistory.to_dict` gives it to the plots as plain data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attnviz.data import Link

POINT_KINDS = ("start", "step", "epoch")
POINT_NUMBERS = ("epochs", "loss", "accuracy", "valid_loss", "aer", "entropy", "seconds")  # float or None


@dataclass
class HistoryProbe:
    """One probe pair; ``role`` is ``"probe"`` (the training's probe sentence) or ``"test"``."""

    role: str
    source_tokens: list[str]  # as the model reads them, ending with "<eos>"
    target_tokens: list[str]  # the forced reference, ending with "<eos>"
    sure: list[Link] | None = None  # gold links over the tokens without <eos>; None: no gold
    possible: list[Link] | None = None

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.target_tokens), len(self.source_tokens)

    def to_dict(self) -> dict:
        def links(value: list[Link] | None) -> list[list[int]] | None:
            return None if value is None else [list(link) for link in value]

        return {
            "role": self.role,
            "source_tokens": list(self.source_tokens),
            "target_tokens": list(self.target_tokens),
            "sure": links(self.sure),
            "possible": links(self.possible),
        }


@dataclass(eq=False)  # holds arrays: two are equal when they are the same object
class AlignmentHistory:
    """Points of a training (``step``, ``epoch``, ``kind`` and the numbers of :data:`POINT_NUMBERS`)
    and, per probe, its attention at every point: ``weights[k]`` is ``[points, T_k, S_k]``."""

    probes: list[HistoryProbe]
    points: list[dict] = field(default_factory=list)
    weights: list[np.ndarray] = field(default_factory=list)  # one [points, T, S] float array per probe

    def __post_init__(self) -> None:
        if not self.weights:
            self.weights = [np.zeros((0, *p.shape), dtype=np.float16) for p in self.probes]

    def __len__(self) -> int:
        return len(self.points)

    def append(self, point: dict, maps: list[np.ndarray]) -> None:
        """Add one point and each probe's ``[T, S]`` attention at it."""
        self.points.append(dict(point))
        self.weights = [np.concatenate([w, m[None].astype(w.dtype)]) for w, m in zip(self.weights, maps, strict=True)]

    def keep(self, indices: list[int]) -> None:
        """Keep only the points at ``indices`` (in order)."""
        self.points = [self.points[i] for i in indices]
        self.weights = [w[indices] for w in self.weights]

    @property
    def nbytes(self) -> int:
        return sum(w.nbytes for w in self.weights)

    def to_dict(self) -> dict:
        """Plain data for plots and JSON: ``{"points": [...], "probes": [{..., "weights":
        [points][T][S] lists}]}``."""
        return {
            "points": [dict(p) for p in self.points],
            "probes": [
                {**p.to_dict(), "weights": np.asarray(w, dtype=np.float64).round(4).tolist()}
                for p, w in zip(self.probes, self.weights, strict=True)
            ],
        }
