"""Reading an attention matrix as a word alignment: hide ``<eos>``, merge subword pieces into words.

Pure functions on a ``[tgt, src]`` weight matrix whose rows are distributions over the source
tokens. Two changes make a figure easier to read without changing what the rows mean:

* **hide ``<eos>``**: the source's last column (attention parked on ``<eos>``, a NULL
  alignment) is removed and the rest of each row renormalised to sum to 1 (a figure keeps each
  row's own total instead, less than 1 for local-p: see :func:`hide_eos`); a row that put all
  its weight on ``<eos>`` stays all zero (nothing to renormalise) and :attr:`Reading.eos_mass`
  records what was hidden.
* **merge pieces**: subword pieces (``@@`` ends a piece that does not end its word, see
  :mod:`attnviz.data.bpe`) become words. A source word's columns are *summed* (the attention
  the word received) and a target word's rows *averaged* (the word's mean attention over its
  pieces), so each row is still a distribution.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from attnviz.data import EOS, join_pieces, word_spans
from attnviz.errors import InputError


@dataclass
class Reading:
    """A ``[tgt_words, src_words]`` matrix with its word labels and how it was made."""

    weights: np.ndarray  # [tgt_words, src_words], rows sum to 1 (0 where all weight was on <eos>)
    source_words: list[str]
    target_words: list[str]
    source_index: list[int]  # for each source token (column of the input), its word; -1 for a hidden <eos>
    target_index: list[int]  # for each target token (row of the input), its word
    eos_mass: np.ndarray | None  # [tgt_words] weight the hidden <eos> column held (None: not hidden)
    caption: str  # one sentence stating the rule, for the figure caption


def _check(weights: np.ndarray, source_tokens: list[str], target_tokens: list[str]) -> np.ndarray:
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 2 or w.shape != (len(target_tokens), len(source_tokens)):
        raise InputError(
            f"weights of shape {w.shape} do not match {len(target_tokens)} target and {len(source_tokens)} "
            "source tokens; pass the [tgt, src] matrix of the same alignment as its tokens"
        )
    return w


def hide_eos(weights: np.ndarray, source_tokens: list[str], keep_total: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The matrix without the source ``<eos>`` column, each row renormalised: ``([tgt, src-1], eos_mass [tgt])``.

    Rows sum to 1 again, the distributions link extraction reads; with ``keep_total`` (what a figure
    shows) each row keeps its own total instead: the same for a softmax row, while a local-p row keeps
    what its Gaussian left, so one with nothing on ``<eos>`` is unchanged. A row with no weight left
    (all of it on ``<eos>``) stays zero rather than being made up.
    """
    w = np.asarray(weights, dtype=np.float64)
    if source_tokens[-1:] != [EOS]:
        raise InputError("the source does not end with <eos>; there is no <eos> column to hide")
    eos_mass = w[:, -1].copy()  # [tgt]
    rest = w[:, :-1]  # [tgt, src-1]
    kept = rest.sum(axis=1, keepdims=True)  # [tgt, 1]
    total = w.sum(axis=1, keepdims=True) if keep_total else np.ones_like(kept)  # [tgt, 1]
    return rest * np.divide(total, kept, out=np.zeros_like(kept), where=kept > 0), eos_mass


def whole_rows(weights: np.ndarray) -> bool:
    """Whether every row of ``weights [..., tgt, src]`` with any weight sums to 1 (a softmax's rows;
    local-p's sum to less, its Gaussian applied after the softmax)."""
    sums = np.asarray(weights, dtype=np.float64).sum(axis=-1)
    return bool(np.allclose(sums[sums > 0], 1.0, atol=1e-3))


def eos_column(weights: np.ndarray, source_tokens: list[str], target_tokens: list[str]) -> np.ndarray | None:
    """The weight each target token's row puts on the source ``<eos>``, ``[tgt]`` (the final ``<eos>``
    row left out: what the decoder read to stop); None when the source has no ``<eos>``. Its mean is
    S-align's "attention parked on ``<eos>``" (Chen et al. 2020)."""
    w = _check(weights, source_tokens, target_tokens)
    if source_tokens[-1:] != [EOS]:
        return None
    rows = w[:-1] if target_tokens[-1:] == [EOS] else w  # [tgt words, src]
    return rows[:, -1].copy()


def eos_share(weights: np.ndarray, source_tokens: list[str], target_tokens: list[str]) -> float | None:
    """The mean of :func:`eos_column`: the share of a sentence's attention parked on the source
    ``<eos>``; None without an ``<eos>`` column or target rows."""
    column = eos_column(weights, source_tokens, target_tokens)
    return None if column is None or column.size == 0 else float(column.mean())


def word_index(tokens: list[str]) -> tuple[list[int], list[str]]:
    """For each token its word number, and the words (pieces joined); ``<eos>`` is a word of its own."""
    body = tokens[:-1] if tokens[-1:] == [EOS] else tokens
    spans = word_spans(body)
    starts = sorted({start for start, _ in spans})
    number = {start: k for k, start in enumerate(starts)}
    index = [number[start] for start, _ in spans]
    words = ["".join(join_pieces(body[start:end])) for start, end in sorted(set(spans))]
    if len(body) < len(tokens):
        index.append(len(words))
        words.append(EOS)
    return index, words


def word_groups(index: list[int]) -> list[list[int]]:
    """The token positions of each word, in word order, from a token -> word index (:func:`word_index`);
    a token of word -1 (a hidden ``<eos>``, :attr:`Reading.source_index`) is in no group."""
    groups: list[list[int]] = [[] for _ in range(max(index, default=-1) + 1)]
    for position, word in enumerate(index):
        if word >= 0:
            groups[word].append(position)
    return groups


def merge_groups(
    a: np.ndarray,
    rows: list[list[int]] | None,
    columns: list[list[int]] | None,
    combine: Callable[..., np.ndarray] = np.sum,
) -> np.ndarray:
    """The one merge of pieces: ``a`` (``[..., rows, columns]``, as floats) with each group of ``columns``
    combined along the last axis (summed by default: the attention a word received) and each group of
    ``rows`` averaged (a word's mean row), so attention rows stay distributions; ``None`` leaves that
    axis as it is. Groups are positions: a word's pieces, a tokenizer's pieces of one token."""
    a = np.asarray(a, dtype=np.float64)
    if columns is not None:
        a = np.stack([combine(a[..., g], axis=-1) for g in columns], axis=-1) if columns else a[..., :0]
    if rows is not None:
        a = np.stack([a[..., g, :].mean(axis=-2) for g in rows], axis=-2) if rows else a[..., :0, :]
    return a  # [..., len(rows), len(columns)]


def merge_pieces(
    weights: np.ndarray, source_tokens: list[str], target_tokens: list[str]
) -> tuple[np.ndarray, list[str], list[str], list[int], list[int]]:
    """Subword pieces merged into words: source columns summed, target rows averaged.

    Returns ``(weights [tgt_words, src_words], source_words, target_words, source_index,
    target_index)``, the indexes mapping each input token to its word.
    """
    w = _check(weights, source_tokens, target_tokens)
    src_index, src_words = word_index(source_tokens)
    tgt_index, tgt_words = word_index(target_tokens)
    merged = merge_groups(w, word_groups(tgt_index), word_groups(src_index))  # [tgt_words, src_words]
    return merged, src_words, tgt_words, src_index, tgt_index


def caption(eos_hidden: bool, merged: bool, whole: bool = True) -> str:
    """The one-sentence rule behind a :func:`read` figure (``merged``: pieces were actually joined;
    ``whole``: the rows sum to 1, see :func:`whole_rows`)."""
    parts = []
    if eos_hidden:
        parts.append("attention on <eos> is hidden and each row renormalised over the remaining source words")
    if merged:
        parts.append(
            "subword pieces are merged into words (a source word's columns summed, a target word's rows averaged)"
        )
    if not parts and whole:
        return "Raw attention weights: each row is the decoder step's distribution over the source tokens."
    if not parts:
        return "Raw attention weights: each row is the decoder step's weights on the source tokens (under 1 in all)."
    rule = "; ".join(parts)
    return (
        rule[0].upper()
        + rule[1:]
        + (", so each row still sums to 1." if whole else ", so each row keeps its total (less than 1).")
    )


def read(
    weights: np.ndarray,
    source_tokens: list[str],
    target_tokens: list[str],
    hide: bool = True,
    merge: bool = True,
) -> Reading:
    """Read a ``[tgt, src]`` attention matrix as words: ``<eos>`` hidden (``hide``), pieces merged (``merge``).

    ``source_tokens`` and ``target_tokens`` label the columns and rows (pieces keep their
    ``@@``); each may end with ``<eos>``. The target ``<eos>`` row is kept as a word of its own.
    """
    w = _check(weights, source_tokens, target_tokens)
    if merge:
        w, src_words, tgt_words, src_index, tgt_index = merge_pieces(w, source_tokens, target_tokens)
    else:
        src_words, tgt_words = list(source_tokens), list(target_tokens)
        src_index, tgt_index = list(range(len(source_tokens))), list(range(len(target_tokens)))
    merged = len(src_words) < len(source_tokens) or len(tgt_words) < len(target_tokens)
    eos_mass = None
    if hide:
        w, eos_mass = hide_eos(w, src_words)
        src_words = src_words[:-1]
        src_index = [-1 if k == len(src_words) else k for k in src_index]
    return Reading(w, src_words, tgt_words, src_index, tgt_index, eos_mass, caption(hide, merged, whole_rows(w)))
