"""Which heads align without gold: every head's word links scored against eflomal's links on the same
pairs (silver), beside gold when there is some, and how far the two rankings agree (Spearman).

A "head" is any attention matrix per sentence pair: one head of a Hugging Face model, or a whole
attnviz model (its one cross-attention). Links come from :func:`attnviz.links.directional_links`
(argmax, threshold, dtw) on words, so they index the same words as eflomal's and the gold ones.
Silver links count as sure links, so a head's silver AER is ``1 - F1`` against eflomal.

The rule for "aligns": a head's silver AER is at least ``margin`` below the median silver AER of all
the heads ranked. It picks the heads that stand out from the rest, however good the rest is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from attnviz.data import Link, Words
from attnviz.errors import DataError, InputError
from attnviz.external.heads import Pick, force_words, word_matrices
from attnviz.external.hf import HFModel
from attnviz.links import DIRECTIONAL, EFLOMAL_METHOD, GoldAlignment, directional_links, run_eflomal, score_links

MARGIN = 0.05  # default: how far below the median silver AER a head must be to count as aligning
TOLERANCE = 1e-9  # a head exactly the margin below the median aligns, whatever floats make of the difference


@dataclass(frozen=True)
class HeadScore:
    """One head's AER against silver links, and against gold when there is gold (else ``None``)."""

    name: str
    silver_aer: float
    gold_aer: float | None
    aligns: bool


@dataclass(frozen=True)
class HeadRanking:
    """Heads ranked by AER against eflomal's links, lowest first, with the rule that picks the aligning
    heads and the Spearman correlation of the silver and gold AERs (``None`` without gold, with fewer
    than two heads, or when either AER is the same for every head)."""

    heads: list[HeadScore]
    pairs: int
    method: str
    median: float
    margin: float
    spearman: float | None

    @property
    def aligning(self) -> list[str]:
        return [h.name for h in self.heads if h.aligns]

    @property
    def rule(self) -> str:
        return f"silver AER <= median {self.median:.3f} - margin {self.margin:.3f}"

    @property
    def counted(self) -> str:
        """How many heads were ranked, in words: ``"12 heads"``, ``"1 head"``."""
        return f"{len(self.heads)} head{'' if len(self.heads) == 1 else 's'}"

    @property
    def spearman_text(self) -> str:
        """Spearman's correlation to three places, or why it is undefined."""
        if self.spearman is not None:
            return f"{self.spearman:.3f}"
        if len(self.heads) < 2:
            return "undefined (one head: a ranking needs two or more)"
        return "undefined (one ranking is flat)"

    def to_dict(self) -> dict:
        rows = [_row(h) for h in self.heads]
        rho = None if self.spearman is None else round(self.spearman, 3)
        return dict(
            pairs=self.pairs, method=self.method, rule=self.rule, aligning=self.aligning, spearman=rho, rows=rows
        )


def _row(h: HeadScore) -> dict:
    gold = None if h.gold_aer is None else round(h.gold_aer, 3)
    return {"attention": h.name, "silver_aer": round(h.silver_aer, 3), "gold_aer": gold, "aligns": h.aligns}


def silver_links(
    sources: list[Words], targets: list[Words], train: Iterable[tuple[Words, Words]] = (), **options
) -> list[list[Link]]:
    """eflomal's links (grow-diag-final-and of both directions) for each pair of given words, compared
    lowercased; eflomal learns from ``train`` plus the pairs. ``options`` go to ``eflomal.Aligner``."""
    if len(sources) != len(targets):
        raise DataError(f"{len(sources)} source but {len(targets)} target sentences; give one of each per pair")

    def lower(pairs: Iterable[tuple[Words, Words]]) -> list[tuple[Words, Words]]:
        return [([w.lower() for w in s], [w.lower() for w in t]) for s, t in pairs]

    pairs = lower(zip(sources, targets, strict=True))
    return run_eflomal(pairs, lower(train), method=EFLOMAL_METHOD, **options)


def as_gold(links: list[list[Link]]) -> list[GoldAlignment]:
    """Links per pair as gold with every link sure: what silver AER is scored against."""
    return [GoldAlignment(set(map(tuple, pair)), set(map(tuple, pair))) for pair in links]


def ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, ties given the average of the ranks they span."""
    order = np.argsort(values, kind="stable")
    out = np.empty(len(values))
    sorted_values = values[order]
    start = 0
    while start < len(values):
        end = start
        while end + 1 < len(values) and sorted_values[end + 1] == sorted_values[start]:
            end += 1
        out[order[start : end + 1]] = (start + end) / 2 + 1
        start = end + 1
    return out


def spearman(a: Iterable[float], b: Iterable[float]) -> float | None:
    """Spearman's rank correlation (Pearson's on average ranks); ``None`` for fewer than two values or
    when either side is constant (no ranking to compare)."""
    x, y = np.asarray(list(a), dtype=float), np.asarray(list(b), dtype=float)
    if len(x) != len(y):
        raise InputError(f"{len(x)} and {len(y)} values; Spearman compares two rankings of the same heads")
    if len(x) < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return None
    rx, ry = ranks(x) - (len(x) + 1) / 2, ranks(y) - (len(y) + 1) / 2
    return float((rx * ry).sum() / np.sqrt((rx * rx).sum() * (ry * ry).sum()))


def rank_heads(
    names: list[str],
    attention: list[np.ndarray],
    silver: list[list[Link]],
    gold: list[GoldAlignment] | None = None,
    method: str = "argmax",
    threshold: float = 0.3,
    margin: float = MARGIN,
) -> HeadRanking:
    """Rank the heads ``names`` by AER against ``silver`` links. ``attention`` holds one ``[heads,
    tgt_words, src_words]`` stack per pair (the heads in the order of ``names``); ``gold``, when given,
    is scored too and the two rankings correlated."""
    if method not in DIRECTIONAL:
        raise InputError(f"links per head come from {', '.join(DIRECTIONAL)}, not {method!r}")
    if not names:
        raise InputError("no heads to rank; give at least one attention matrix per pair")
    if not attention:
        raise DataError("no sentence pairs to rank the heads on; give one attention stack per pair")
    if not 0 <= margin <= 1:  # NaN fails too
        raise InputError(f"margin {margin}: a head aligns this far below the median AER; give a number from 0 to 1")
    if len(attention) != len(silver) or (gold is not None and len(gold) != len(silver)):
        have = "" if gold is None else f", {len(gold)} gold"
        raise DataError(f"{len(attention)} attention stacks, {len(silver)} silver{have} alignments; give one per pair")
    predicted: list[list[list[Link]]] = [[] for _ in names]
    for n, stack in enumerate(attention, start=1):
        if stack.ndim != 3 or stack.shape[0] != len(names):
            raise DataError(f"pair {n}: attention of shape {stack.shape}; expected [{len(names)} heads, tgt, src]")
        for k, matrix in enumerate(stack):  # [tgt_words, src_words]
            predicted[k].append(sorted(directional_links(matrix, method, threshold)))
    silver_gold = as_gold(silver)
    silver_aer = np.array([score_links(links, silver_gold)[0].aer for links in predicted])
    gold_aer = None if gold is None else np.array([score_links(links, gold)[0].aer for links in predicted])
    median = float(np.median(silver_aer))
    heads = []
    for k, name in enumerate(names):
        gold_k = None if gold_aer is None else float(gold_aer[k])
        aligns = median - silver_aer[k] >= margin - TOLERANCE  # AERs are ratios: 0.70 - 0.05 is 0.6499999...
        heads.append(HeadScore(name, float(silver_aer[k]), gold_k, bool(aligns)))
    heads.sort(key=lambda h: h.silver_aer)
    rho = None if gold_aer is None else spearman(silver_aer, gold_aer)
    return HeadRanking(heads, len(silver), method, median, margin, rho)


def hf_head_attention(
    model: HFModel, sources: list[Words], targets: list[Words], picks: list[Pick] | None = None
) -> tuple[list[str], list[np.ndarray]]:
    """Every head of ``model`` (or ``picks``) read as words for each pair forced through it: ``(names,
    one [picks, tgt_words, src_words] stack per pair)``, ready for :func:`rank_heads`."""
    picks = picks or [Pick(layer, head) for layer in range(model.info.layers) for head in range(model.info.heads)]
    pairs = enumerate(zip(sources, targets, strict=True), start=1)
    stacks = [word_matrices(force_words(model, src, tgt, n), picks)[0] for n, (src, tgt) in pairs]
    return [p.name for p in picks], stacks
