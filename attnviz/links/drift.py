"""Drift: whether predicted links sit a consistent number of words off the reference links, and from where.

An aligner read from attention often "drifts by one token": from some word of the sentence on, each
link lands one word after (or before) the right one. This module measures that against reference
links (a gold file's sure links, or another aligner's links), per sentence and for a corpus.

Definitions, for ``side="source"`` (the source index is shifted; positions run along the target):

* **positions**: a sentence's target words ``p = 0 .. n-1``. With ``side="target"`` the roles swap:
  the target index is shifted and positions run along the source.
* **offset d**: a predicted link ``(i, j)`` agrees with the reference at offset ``d`` when ``(i - d, j)``
  is a reference link. ``d = +1``: the prediction sits one word *after* the reference word (one word
  ahead of it); ``d = -1``: one word before. ``a_d(p)`` counts the predicted links at position ``p``
  that agree at offset ``d``; ``a_0`` is plain agreement.
* **a sentence's drift**: one change point ``c`` and one offset ``d``: offset 0 before ``c``, ``d`` from
  ``c`` on. Its score is ``S(d, c) = sum_{p < c} a_0(p) + sum_{p >= c} a_d(p)`` (agreeing links) and its
  **gain** ``max_c S(d, c) - S(0)``, the links the shift wins. The sentence's **offset** is the ``d`` in
  ``-max_offset .. +max_offset`` of largest gain (ties: the smaller ``|d|``, then the positive one); 0
  when no offset gains ``min_gain`` links (2 by default: a single link off its word, as a sentence's
  last word often is, reads as an error; a drift moves two or more).
* **start**: the change point, the earliest position ``c`` that maximises ``S(d, c)`` and where the
  shifted link agrees better than the unshifted one (``a_d(c) > a_0(c)``): the first word that shows the
  drift, not an earlier word without links.
* **before / after / shifted**: the share of predicted links before ``start`` that agree at offset 0,
  of those from ``start`` on that agree at offset 0, and of those from ``start`` on that agree at offset
  ``d``. A sentence without drift has ``before`` over all its links and no start.
* A sentence without predicted or without reference links has no offset (``None``): it is undecided.

For a corpus: the **histogram** of sentence offsets (every offset of the range, 0 included); the
**dominant** offset, the most common one (ties as above) and its **share** of the decided sentences;
the **drift**, the most common non-zero offset, its share, and its **typical start**, the median start
of the sentences with that offset (absolute, and relative to the sentence's length ``start / n``); and
the **profile**, per offset and per tenth of the sentence (a link at position ``p`` of ``n`` falls in bin
``floor((p + 0.5) / n * bins)``), the share of predicted links that agree at that offset; and the
**agreement** at each offset over the whole corpus, which shows single words off by an offset (a
look-ahead) that no sentence's drift holds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from statistics import median

from attnviz.data import Link
from attnviz.errors import InputError

DRIFT_SIDES = ("source", "target")
MAX_OFFSET = 3
MIN_GAIN = 2
BINS = 10


@dataclass
class SentenceDrift:
    """One sentence's offset and where it starts (see the module's definitions)."""

    offset: int | None  # None: no predicted or no reference links, undecided
    start: int | None  # the position the offset holds from; None without drift
    length: int  # positions (target words for side="source")
    links: int  # predicted links
    gain: int = 0  # agreeing links the shift wins
    before: float | None = None  # share agreeing unshifted before start (all links without drift)
    after: float | None = None  # share agreeing unshifted from start on
    shifted: float | None = None  # share agreeing at the offset from start on

    @property
    def relative_start(self) -> float | None:
        """``start / length``: 0 for a drift from the first word, near 1 for one at the last."""
        return None if self.start is None else self.start / self.length

    def to_dict(self) -> dict:
        return {**asdict(self), "relative_start": self.relative_start}


@dataclass
class DriftReport:
    """A corpus's drift: every sentence's, the histogram, the dominant offset and the profile."""

    sentences: list[SentenceDrift | None]  # per pair; None for a pair without predicted links (skipped)
    side: str  # the side whose index is shifted
    offsets: list[int]  # the offsets tried, -max_offset .. +max_offset
    histogram: dict[int, int]  # offset -> decided sentences with it
    profile: list[list[float | None]]  # [offsets, bins]: share of links agreeing at that offset
    profile_links: list[int]  # [bins]: the predicted links each bin's shares count
    dominant: int | None = None  # the most common offset (None: no sentence decided)
    share: float = 0.0  # of the decided sentences, those with the dominant offset
    drift: int | None = None  # the most common non-zero offset
    drift_share: float = 0.0
    start: float | None = None  # median start of the sentences with the drift
    relative_start: float | None = None  # median start / length of those sentences
    decided: int = 0
    undecided: list[int] = field(default_factory=list)  # pairs with no predicted or no reference links

    @property
    def positions(self) -> str:
        """What a start counts: ``"target"`` words when the source side is shifted, and vice versa."""
        return DRIFT_SIDES[1 - DRIFT_SIDES.index(self.side)]

    @property
    def agreement(self) -> dict[int, float | None]:
        """Each offset's share of all predicted links (of the decided sentences) that agree at it, wherever
        they sit: a look-ahead of single words shows here, and in no sentence's drift."""
        total = sum(self.profile_links)
        return {
            d: sum(share * n for share, n in zip(row, self.profile_links, strict=True) if n) / total if total else None
            for d, row in zip(self.offsets, self.profile, strict=True)
        }

    def summary(self) -> str:
        """One sentence for the CLI and the app: the dominant offset, the drift and where it starts."""
        if not self.decided:
            return "no sentence has both predicted and reference links, so there is no drift to measure"
        dominant = self.dominant or 0
        text = f"offset {signed(dominant)} in {self.histogram[dominant]} of {self.decided} sentences ({self.share:.0%})"
        if self.drift is None:
            return f"{text}; no sentence drifts"
        if self.drift != dominant:
            share = f"{self.histogram[self.drift]} ({self.drift_share:.0%})"
            text += f"; the most common drift, {signed(self.drift)}, in {share}"
        where = f"{self.relative_start:.0%} into the sentence"
        return f"{text}, from {self.positions} word {self.start:g} on (the median start; {where})"

    def to_dict(self, sentences: bool = False) -> dict:
        out = {key: value for key, value in asdict(self).items() if key != "sentences"}
        out["histogram"] = {signed(d): n for d, n in self.histogram.items()}
        out["positions"] = self.positions
        out["agreement"] = {signed(d): share for d, share in self.agreement.items()}
        if sentences:
            out["sentences"] = [s.to_dict() if s is not None else None for s in self.sentences]
        return out


def signed(d: int) -> str:
    """An offset as people write it: ``+1``, ``0``, ``-2``."""
    return f"{d:+d}" if d else "0"


def _by_position(links: Iterable[Link], side: str) -> list[tuple[int, int]]:
    """``(position, shifted index)`` of each link: ``(j, i)`` when the source is shifted, ``(i, j)`` otherwise."""
    return [(j, i) if side == "source" else (i, j) for i, j in links]


def _length(predicted: list[tuple[int, int]], reference: set[tuple[int, int]], given: int | None) -> int:
    positions = [p for p, _ in predicted] + [p for p, _ in reference]
    if given is None:
        return 1 + max(positions, default=-1)
    if positions and max(positions) >= given:
        raise InputError(
            f"a link at position {max(positions)} lies outside a sentence of {given} words; links are 0-based "
            "(source, target) pairs and lengths (source words, target words)"
        )
    return given


def _share(hits: int, total: int) -> float | None:
    return hits / total if total else None


def _best_start(a0: list[int], ad: list[int]) -> tuple[int, int]:
    """``(max_c S(d, c) - S(0), c)``: the earliest maximiser with ``a_d(c) > a_0(c)``; gain 0 has no start."""
    score, best, start = 0, 0, -1  # S(d, c) - S(0), walking c from the end: sum_{p >= c} (a_d - a_0)
    for c in range(len(a0) - 1, -1, -1):
        score += ad[c] - a0[c]
        if ad[c] > a0[c] and score > 0 and score >= best:
            best, start = score, c
    return best, start


def sentence_drift(
    predicted: Iterable[Link],
    reference: Iterable[Link],
    length: int | None = None,
    side: str = "source",
    max_offset: int = MAX_OFFSET,
    min_gain: int = MIN_GAIN,
) -> SentenceDrift:
    """One sentence's drift: the offset of largest gain and the position it starts from (module docstring).

    ``predicted`` and ``reference`` are ``(source, target)`` links, 0-based; ``length`` is the number of
    positions (target words for ``side="source"``), by default the last position any link has plus one;
    ``min_gain`` the links an offset must win to count as a drift.
    """
    if side not in DRIFT_SIDES:
        raise InputError(f"side must be one of {', '.join(DRIFT_SIDES)}, got {side!r}")
    if isinstance(max_offset, bool) or not isinstance(max_offset, int) or max_offset < 1:
        raise InputError(f"max_offset must be a whole number of words, 1 or more (3 is usual), got {max_offset!r}")
    if isinstance(min_gain, bool) or not isinstance(min_gain, int) or min_gain < 1:
        raise InputError(f"min_gain must be a whole number of links, 1 or more (2 is usual), got {min_gain!r}")
    pred = sorted(set(_by_position(predicted, side)))
    ref = set(_by_position(reference, side))
    if any(p < 0 or x < 0 for p, x in (*pred, *ref)):
        raise InputError("a link has a negative index; links are 0-based (source, target) pairs")
    n = _length(pred, ref, length)
    if not pred or not ref:
        return SentenceDrift(None, None, n, len(pred))

    def agree(d: int) -> list[int]:
        a = [0] * n
        for p, x in pred:
            a[p] += (p, x - d) in ref
        return a

    a0 = agree(0)
    total = [0] * n
    for p, _ in pred:
        total[p] += 1
    best = (min_gain - 1, 0, -1, a0)  # (gain, offset, start, a_d): a drift gains min_gain links or more
    for d in sorted((d for d in range(-max_offset, max_offset + 1) if d), key=lambda d: (abs(d), -d)):
        ad = agree(d)
        gain, c = _best_start(a0, ad)
        if gain > best[0]:
            best = (gain, d, c, ad)
    gain, d, c, ad = best
    if not d:
        return SentenceDrift(0, None, n, len(pred), 0, _share(sum(a0), len(pred)))
    early, late = sum(total[:c]), sum(total[c:])
    return SentenceDrift(
        d, c, n, len(pred), gain, _share(sum(a0[:c]), early), _share(sum(a0[c:]), late), _share(sum(ad[c:]), late)
    )


def _most_common(counts: Counter) -> int | None:
    """The offset most sentences have; ties go to the smaller ``|d|``, then the positive one."""
    if not counts:
        return None
    return min(counts, key=lambda d: (-counts[d], abs(d), -d))


def _profile(
    pairs: list[tuple[list[tuple[int, int]], set[tuple[int, int]], int]], offsets: list[int], bins: int
) -> tuple[list[list[float | None]], list[int]]:
    """Per offset and bin of relative position, the share of predicted links that agree at that offset; and
    the links in each bin."""
    hits = [[0] * bins for _ in offsets]
    total = [0] * bins
    for pred, ref, n in pairs:
        for p, x in pred:
            b = min(int((p + 0.5) / n * bins), bins - 1)
            total[b] += 1
            for row, d in enumerate(offsets):
                hits[row][b] += (p, x - d) in ref
    return [[_share(h, t) for h, t in zip(row, total, strict=True)] for row in hits], total


def corpus_drift(
    predicted: Sequence[Iterable[Link] | None],
    reference: Sequence[Iterable[Link]],
    lengths: Sequence[tuple[int, int]] | None = None,
    side: str = "source",
    max_offset: int = MAX_OFFSET,
    min_gain: int = MIN_GAIN,
    bins: int = BINS,
) -> DriftReport:
    """Every sentence's drift (:func:`sentence_drift`) and the corpus's: histogram, dominant offset and its
    share, the most common non-zero offset and its typical start, and the profile (module docstring).

    ``predicted`` holds each pair's ``(source, target)`` links, ``None`` for a pair the aligner skipped;
    ``reference`` the reference links of the same pairs (a gold file's sure links); ``lengths`` each
    pair's ``(source words, target words)``, by default read off the links.
    """
    if len(predicted) != len(reference):
        raise InputError(
            f"{len(predicted)} predicted but {len(reference)} reference sentences; give one list of links per pair"
        )
    if lengths is not None and len(lengths) != len(predicted):
        raise InputError(f"{len(lengths)} lengths for {len(predicted)} pairs; give (source, target) words per pair")
    if isinstance(bins, bool) or not isinstance(bins, int) or bins < 1:
        raise InputError(f"bins must be a whole number, 1 or more (10: tenths of the sentence), got {bins!r}")
    sentences: list[SentenceDrift | None] = []
    decided: list[tuple[list[tuple[int, int]], set[tuple[int, int]], int]] = []
    undecided = []
    for k, (pred, ref) in enumerate(zip(predicted, reference, strict=True)):
        if pred is None:
            sentences.append(None)
            continue
        pred, ref = list(pred), list(ref)
        length = None if lengths is None else lengths[k][0 if side == "target" else 1]
        s = sentence_drift(pred, ref, length, side, max_offset, min_gain)
        sentences.append(s)
        if s.offset is None:
            undecided.append(k)
        else:
            decided.append((_by_position(pred, side), set(_by_position(ref, side)), s.length))
    offsets = list(range(-max_offset, max_offset + 1))
    counts = Counter(s.offset for s in sentences if s is not None and s.offset is not None)
    histogram = {d: counts[d] for d in offsets}
    profile, links = _profile(decided, offsets, bins)
    report = DriftReport(sentences, side, offsets, histogram, profile, links, decided=len(decided), undecided=undecided)
    if not decided:
        return report
    report.dominant = _most_common(counts)
    report.share = counts[report.dominant] / len(decided)
    report.drift = _most_common(Counter({d: n for d, n in counts.items() if d}))
    if report.drift is not None:
        drifted = [s for s in sentences if s is not None and s.offset == report.drift]
        report.drift_share = len(drifted) / len(decided)
        report.start = median(s.start for s in drifted)
        report.relative_start = median(s.relative_start for s in drifted)
    return report
