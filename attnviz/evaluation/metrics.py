"""Translation and alignment metrics: BLEU, exact match, AER/precision/recall and attention statistics.

Links are ``(source_index, target_index)`` pairs over the tokens *without* ``<eos>``, the same
convention as Pharaoh ``i-j`` files and :meth:`attnviz.decoding.trace.Alignment.hard_links`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import sacrebleu

from attnviz.data import EOS, HAN, Link
from attnviz.decoding import Alignment
from attnviz.errors import InputError, check_many


def _check_pairs(hypotheses: list[str], references: list[str]) -> None:
    check_many(hypotheses, "hypotheses (one string a sentence)")
    check_many(references, "references (one string a sentence)")
    if len(hypotheses) != len(references):
        raise InputError(
            f"got {len(hypotheses)} hypotheses but {len(references)} references; "
            "pass one reference per hypothesis, in the same order"
        )


_CJK = re.compile(f"[\u3040-\u30ff{HAN}]")  # kana and Chinese characters
_UNSPACED = re.compile("[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u0f00-\u0fff]")  # Thai, Lao, Myanmar, Khmer, Tibetan
_LETTERS = re.compile(r"[^\W\d_]")


def bleu_tokenize(references: list[str]) -> str:
    """The sacreBLEU tokenization BLEU reads ``references`` with: ``"zh"`` (each Chinese character a
    token) when a third or more of their letters are Chinese characters or kana, ``"char"`` when as many
    are Thai, Lao, Myanmar, Khmer or Tibetan (written without spaces between words, so 13a would read a
    sentence as one word), else ``"13a"``, the standard's."""
    text = "".join(references)
    letters = len(_LETTERS.findall(text))
    if letters and 3 * len(_CJK.findall(text)) >= letters:
        return "zh"
    if letters and 3 * len(_UNSPACED.findall(text)) >= letters:
        return "char"
    return "13a"


def bleu(hypotheses: list[str], references: list[str], lowercase: bool = True) -> float:
    """Corpus BLEU (sacreBLEU, :func:`bleu_tokenize`'s tokenization of the references: 13a for text
    written with spaces) of detokenized strings, 0-100; 0.0 if empty."""
    _check_pairs(hypotheses, references)
    if not hypotheses:
        return 0.0
    tokenize = bleu_tokenize(references)
    return float(sacrebleu.corpus_bleu(hypotheses, [references], lowercase=lowercase, tokenize=tokenize).score)


def exact_match(hypotheses: list[str], references: list[str]) -> float:
    """Fraction of hypotheses equal to their reference after stripping outer whitespace, in [0, 1]."""
    _check_pairs(hypotheses, references)
    if not hypotheses:
        return 0.0
    return sum(h.strip() == r.strip() for h, r in zip(hypotheses, references, strict=True)) / len(hypotheses)


@dataclass(frozen=True)
class AlignmentCounts:
    """Link counts behind precision, recall and AER (Och & Ney 2003); they add up over sentences.

    ``P`` is ``possible ∪ sure``, so ``S ⊆ P`` holds even when a data set lists only the extra
    possible links. Empty denominators score as perfect: precision 1.0 with no predicted links,
    recall 1.0 with no sure links, AER 0.0 with neither.
    """

    predicted: int = 0  # |A|
    sure: int = 0  # |S|
    predicted_sure: int = 0  # |A ∩ S|
    predicted_possible: int = 0  # |A ∩ P|

    def __add__(self, other: AlignmentCounts) -> AlignmentCounts:
        return AlignmentCounts(
            self.predicted + other.predicted,
            self.sure + other.sure,
            self.predicted_sure + other.predicted_sure,
            self.predicted_possible + other.predicted_possible,
        )

    @property
    def precision(self) -> float:
        """``|A ∩ P| / |A|``."""
        return self.predicted_possible / self.predicted if self.predicted else 1.0

    @property
    def recall(self) -> float:
        """``|A ∩ S| / |S|``."""
        return self.predicted_sure / self.sure if self.sure else 1.0

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall (with ``S = P`` it is ``1 - AER``)."""
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def aer(self) -> float:
        """``1 - (|A ∩ S| + |A ∩ P|) / (|A| + |S|)``."""
        total = self.predicted + self.sure
        return 1.0 - (self.predicted_sure + self.predicted_possible) / total if total else 0.0

    def to_dict(self) -> dict:
        return {
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
            "aer": round(self.aer, 4),
            "predicted": self.predicted,
            "sure": self.sure,
            "predicted_sure": self.predicted_sure,
            "predicted_possible": self.predicted_possible,
        }


def alignment_counts(
    hard_links: Iterable[Iterable[Link]],
    sure: Iterable[Iterable[Link]],
    possible: Iterable[Iterable[Link]] | None = None,
) -> list[AlignmentCounts]:
    """Per-sentence :class:`AlignmentCounts`; ``sum(counts, AlignmentCounts())`` is the corpus.

    Each argument holds one link collection (set or list) per sentence; ``possible=None``
    means ``P = S``.
    """
    hyp = [set(a) for a in hard_links]
    sure_sets = [set(s) for s in sure]
    poss_sets = [set(p) for p in possible] if possible is not None else [set() for _ in sure_sets]
    if not len(hyp) == len(sure_sets) == len(poss_sets):
        raise InputError(
            f"AER needs one link set per sentence: got {len(hyp)} predicted, {len(sure_sets)} sure "
            f"and {len(poss_sets)} possible"
        )
    return [
        AlignmentCounts(len(a), len(s), len(a & s), len(a & (p | s)))
        for a, s, p in zip(hyp, sure_sets, poss_sets, strict=True)
    ]


def aer(
    hard_links: Iterable[Iterable[Link]],
    sure: Iterable[Iterable[Link]],
    possible: Iterable[Iterable[Link]] | None = None,
) -> float:
    """Alignment error rate (Och & Ney 2003), summed over the corpus.

    ``AER = 1 - (|A∩S| + |A∩P|) / (|A| + |S|)`` with ``A`` the predicted links, ``S`` the sure
    and ``P`` the possible gold links (see :class:`AlignmentCounts`). A corpus with no predicted
    and no sure links scores 0.0.
    """
    return sum(alignment_counts(hard_links, sure, possible), AlignmentCounts()).aer


def alignment_links(alignment: Alignment, n_source: int | None = None, n_target: int | None = None) -> set[Link]:
    """The argmax source position of each target token, as ``(source_index, target_index)`` links.

    The ``<eos>`` target row is dropped, and a step whose argmax is the ``<eos>`` source column
    gets no link (attention on ``<eos>`` plays the role of a NULL alignment). ``n_source`` and
    ``n_target`` (the gold sentence lengths, without eos) default to the alignment's own lengths;
    links outside them are dropped.
    """
    n_source = len(alignment.source_text_tokens) if n_source is None else n_source
    n_target = len(alignment.output_tokens) if n_target is None else n_target
    src_eos = len(alignment.source_tokens) - 1 if alignment.source_tokens[-1:] == [EOS] else None
    links = set()
    for i, j in alignment.hard_links():
        if i != src_eos and i < n_source and j < n_target and j < len(alignment.output_tokens):
            links.add((i, j))
    return links


def entropy(weights: np.ndarray) -> np.ndarray:
    """Entropy in nats of each row (last axis) of a probability array: ``[..., n] -> [...]``."""
    w = np.asarray(weights, dtype=np.float64)
    logw = np.log(np.where(w > 0, w, 1.0))  # 0 log 0 = 0
    return -(w * logw).sum(axis=-1)


def mean_entropy(weights: np.ndarray | Alignment | Iterable[np.ndarray | Alignment]) -> float:
    """Mean per-step entropy (nats) over one weight matrix, one alignment or many of either."""
    if isinstance(weights, Alignment | np.ndarray):
        weights = [weights]
    rows = [entropy(w.weights if isinstance(w, Alignment) else w).ravel() for w in weights]
    rows = [r for r in rows if r.size]
    return float(np.concatenate(rows).mean()) if rows else 0.0


def js_divergence(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Jensen-Shannon divergence in nats per row (last axis): symmetric, zero-safe, in [0, ln 2]."""
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    if p.shape != q.shape:
        raise InputError(
            f"JS divergence needs arrays of the same shape, got {p.shape} and {q.shape}; "
            "decode both models on the same target (forced decoding) to compare step by step"
        )
    m = (p + q) / 2  # [..., n]

    def kl(a: np.ndarray) -> np.ndarray:
        ratio = np.where(a > 0, a / np.where(m > 0, m, 1.0), 1.0)
        return (a * np.log(ratio)).sum(axis=-1)

    return np.clip((kl(p) + kl(q)) / 2, 0.0, None)
