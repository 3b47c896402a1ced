"""A sample of a corpus's alignments: N pairs of a split drawn with a seed, each read as words by the
model (its word-level attention and the links extracted from it) and scored against the pair's gold
links (AER) or, for data without gold, against eflomal's links of the same pairs (agreement, F1).

``attnviz align-report`` and Explore's Alignment view render it as one HTML page
(:func:`attnviz.plots.report_html`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from attnviz.data import Link, Pair, join_pieces
from attnviz.decoding import Translator
from attnviz.errors import InputError
from attnviz.evaluation import measured_on
from attnviz.links.extract import directional_links, word_attention
from attnviz.links.goldfile import GoldAlignment, score_links
from attnviz.links.yardstick import SAMPLE_PAIRS, agreement, eflomal_links, word_pairs

REPORT_METHODS = ("argmax", "dtw")  # word links a report reads from attention
REPORT_SPLITS = ("train", "valid", "test")
MAX_SAMPLE = 1000  # pairs a report samples at most


@dataclass(frozen=True)
class ReportSentence:
    """One sampled pair: its words, the ``[tgt_words, src_words]`` attention, the links extracted from
    it, its score, and the reference links (gold ``sure``/``possible``, or ``eflomal``'s)."""

    index: int  # the pair's place in its split
    source_words: list[str]
    target_words: list[str]
    weights: np.ndarray  # [tgt_words, src_words]
    links: list[Link]
    score: float
    sure: list[Link] | None = None
    possible: list[Link] | None = None
    eflomal: list[Link] | None = None


@dataclass(frozen=True)
class AlignmentSample:
    """What :func:`sample_alignments` read: the sentences, how many sampled pairs the model could not
    read as their words, the measure (``"AER"`` against gold, else ``"agreement"`` with eflomal), and
    where the pairs came from."""

    sentences: list[ReportSentence]
    skipped: int
    measure: str
    data: str  # the data spec
    split: str

    @property
    def mean(self) -> float:
        return float(np.mean([s.score for s in self.sentences]))


def _words(pair: Pair) -> tuple[list[str], list[str]]:
    """The words a sentence is shown and scored in: the tokens gold indexes, else subword pieces joined."""
    if pair.has_gold:
        return list(pair.source_tokens), list(pair.target_tokens)
    return join_pieces(pair.source_tokens), join_pieces(pair.target_tokens)


def report_sentences(
    model: Translator, pairs: list[Pair], picked: list[int], method: str, train: list[Pair]
) -> tuple[list[ReportSentence], int]:
    """A :class:`ReportSentence` per picked pair the model reads as the pair's words (scored against gold
    when every one has gold, else against eflomal's links, trained beside a sample of ``train``); and
    how many it could not read."""
    read = []
    for k in picked:
        src, tgt = _words(pairs[k])
        if not src or not tgt:
            continue
        # gold indexes the pair's own tokens: the model reads its text as evaluate does (a character
        # model's tokens are characters, spaces among them); other pairs are read as the words shown
        given = (pairs[k].source, pairs[k].target) if pairs[k].has_gold else (src, tgt)
        try:
            reading = word_attention(model, *given)
        except InputError:  # too long for the model
            continue
        if (len(reading.source_words), len(reading.target_words)) == (len(src), len(tgt)):
            read.append((k, src, tgt, reading.weights, sorted(directional_links(reading.weights, method))))
    if read and all(pairs[k].has_gold for k, *_ in read):
        out = []
        for k, src, tgt, weights, links in read:
            gold = GoldAlignment()
            for link in pairs[k].possible or ():
                gold.add(tuple(link), sure=False)
            for link in pairs[k].sure:
                gold.add(tuple(link), sure=True)
            aer = score_links([links], [gold])[0].aer
            out.append(ReportSentence(k, src, tgt, weights, links, aer, sorted(gold.sure), sorted(gold.possible)))
        return out, len(picked) - len(out)
    silver = eflomal_links([(src, tgt) for _, src, tgt, _, _ in read], word_pairs(train, SAMPLE_PAIRS)) if read else []
    out = [
        ReportSentence(k, src, tgt, weights, links, agreement(links, e), eflomal=e)
        for (k, src, tgt, weights, links), e in zip(read, silver, strict=True)
    ]
    return out, len(picked) - len(out)


def sample_alignments(
    model: Translator,
    data: str | None = None,
    split: str = "train",
    n: int = 50,
    seed: int = 0,
    method: str = "argmax",
) -> AlignmentSample:
    """``n`` pairs of ``split`` of ``data`` (default: the data the model was trained on) drawn with
    ``seed``, read and scored (:func:`report_sentences`). Raises :class:`InputError` for an empty split,
    a sample the model can read none of, or options out of range."""
    from attnviz.data import load_corpus

    if split not in REPORT_SPLITS:
        raise InputError(f"unknown split {split!r}; choose one of {', '.join(REPORT_SPLITS)}")
    if method not in REPORT_METHODS:
        raise InputError(f"a report reads {' or '.join(REPORT_METHODS)} links, not {method!r}")
    if not 1 <= n <= MAX_SAMPLE:
        raise InputError(f"sample between 1 and {MAX_SAMPLE} pairs, not {n}")
    spec, options = measured_on(model.meta, data)
    corpus = load_corpus(spec, **options)
    pairs = corpus.split(split)
    if not pairs:
        raise InputError(f"the {split} split of {spec} is empty; choose another split")
    picked = sorted(random.Random(seed).sample(range(len(pairs)), min(n, len(pairs))))
    sentences, skipped = report_sentences(model, pairs, picked, method, corpus.train)
    if not sentences:
        raise InputError(f"the model could read none of the {len(picked)} sampled pairs; check the data and the model")
    measure = "AER" if sentences[0].sure is not None else "agreement"
    return AlignmentSample(sentences, skipped, measure, spec, split)
