"""Whisper's recipe for turning cross-attention into a monotonic alignment (Radford et al., 2022,
``whisper/timing.py``), on a ``[tgt, src]`` word matrix instead of tokens against audio frames.

1. **pick alignment heads**: a stack of ``[heads, tgt, src]`` matrices (Whisper ships a list of
   heads per model; for an attnviz RNN the one attention matrix is the one head);
2. **standardise** each head's columns over the target rows (z-scores: a source word that draws
   attention at every step, an attention sink, stops dominating) and **median-filter** each row
   along the source axis (width :data:`DTW_WIDTH`, reflected at the ends), then average the heads.
   Whisper filters 7 audio frames, and a token spans several; a word usually aligns to one source
   word, a peak one cell wide that a wider filter erases, so the default width is 1 (no filter);
3. **dynamic time warping** on the negated matrix: the cheapest path from the first cell to the
   last with steps down, right or diagonal, so every target and every source word is on it and
   it never goes back. The cells of the path are the links.

The path is monotonic by construction: it suits language pairs in the same word order and
cannot follow a reordering (the gold score shows how much that costs). Pure numpy.
"""

from __future__ import annotations

import numpy as np

from attnviz.data import Link
from attnviz.errors import InputError

DTW_WIDTH = 1  # median filter width over source words (Whisper: 7 over 20 ms audio frames); 1 keeps one-word peaks


def median_filter(x: np.ndarray, width: int) -> np.ndarray:
    """Median of each window of ``width`` (odd) along the last axis, the ends reflected as Whisper pads them."""
    if width < 1 or width % 2 == 0:
        raise InputError(f"the median filter width must be an odd number >= 1, got {width}")
    x = np.asarray(x, dtype=np.float64)
    if width == 1 or x.shape[-1] == 0:
        return x.copy()
    half = width // 2
    pad = [(0, 0)] * (x.ndim - 1) + [(half, half)]
    padded = np.pad(x, pad, mode="reflect" if x.shape[-1] > 1 else "edge")  # [..., src + 2 half]
    windows = np.lib.stride_tricks.sliding_window_view(padded, width, axis=-1)  # [..., src, width]
    return np.median(windows, axis=-1)


def standardise(heads: np.ndarray) -> np.ndarray:
    """Each head's columns as z-scores over the target rows (``[heads, tgt, src]``); a constant column becomes 0."""
    heads = np.asarray(heads, dtype=np.float64)
    mean = heads.mean(axis=-2, keepdims=True)  # [heads, 1, src]
    std = heads.std(axis=-2, keepdims=True)  # [heads, 1, src]
    return np.divide(heads - mean, std, out=np.zeros_like(heads), where=std > 0)


def dtw_path(cost: np.ndarray) -> list[tuple[int, int]]:
    """The cheapest monotonic path through ``cost`` ``[tgt, src]`` from ``(0, 0)`` to ``(tgt-1, src-1)``,
    with steps ``(1, 1)``, ``(1, 0)`` and ``(0, 1)``: its cells ``(t, s)`` in order. Ties prefer the
    diagonal, then the step down (Whisper's backtrace prefers the step along the row: only exact ties
    differ)."""
    cost = np.asarray(cost, dtype=np.float64)
    if cost.ndim != 2 or 0 in cost.shape:
        raise InputError(f"dynamic time warping needs a non-empty [target, source] matrix, got shape {cost.shape}")
    n, m = cost.shape
    total = np.full((n + 1, m + 1), np.inf)  # total[i, j]: cheapest path ending at cell (i-1, j-1)
    total[0, 0] = 0.0
    trace = np.zeros((n + 1, m + 1), dtype=np.int8)  # 0 diagonal, 1 down (from the row above), 2 right
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            came = (total[i - 1, j - 1], total[i - 1, j], total[i, j - 1])
            k = int(np.argmin(came))
            total[i, j] = cost[i - 1, j - 1] + came[k]
            trace[i, j] = k
    path, i, j = [], n, m
    while i > 0 and j > 0:
        path.append((i - 1, j - 1))
        k = trace[i, j]
        i, j = (i - 1, j - 1) if k == 0 else (i - 1, j) if k == 1 else (i, j - 1)
    return path[::-1]


def dtw_matrix(weights: np.ndarray, width: int = DTW_WIDTH) -> np.ndarray:
    """The matrix the path is found on: the heads (``[heads, tgt, src]`` or one ``[tgt, src]``)
    standardised, median-filtered along the source and averaged: ``[tgt, src]``."""
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim == 2:
        w = w[None]  # [1, tgt, src]
    if w.ndim != 3 or 0 in w.shape:
        raise InputError(f"expected [tgt, src] or [heads, tgt, src] attention weights, got shape {w.shape}")
    return median_filter(standardise(w), width).mean(axis=0)  # [tgt, src]


def dtw_links(weights: np.ndarray, width: int = DTW_WIDTH) -> set[Link]:
    """Whisper's alignment of ``weights`` (``[tgt, src]`` or ``[heads, tgt, src]``) as
    ``(source_index, target_index)`` links: the cells of the DTW path through :func:`dtw_matrix`."""
    return {(s, t) for t, s in dtw_path(-dtw_matrix(weights, width))}
