"""Rank correlation of an attribution row with an attention row."""

from __future__ import annotations

import numpy as np


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman rank correlation of two vectors (ties get their average rank); nan if either is constant."""
    ra, rb = _ranks(a), _ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denom = np.sqrt((ra**2).sum() * (rb**2).sum())
    return float((ra * rb).sum() / denom) if denom > 0 else float("nan")


def _ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 0..n-1 of ``x``, tied values sharing their average rank."""
    _, inverse, counts = np.unique(np.asarray(x, dtype=np.float64), return_inverse=True, return_counts=True)
    return (np.cumsum(counts) - (counts + 1) / 2)[inverse]
