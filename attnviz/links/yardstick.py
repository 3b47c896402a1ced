"""Attention's word links beside a real aligner's, as the app shows them.

* eflomal run fast enough for a click: the sentences to align plus a sample of the task's
  training pairs (:data:`SAMPLE_PAIRS`), one sampler, half the iterations (:data:`FAST_EFLOMAL`).
  Its AER beside the full run's (benchmarks/alignment_yardstick.py) is in docs/results.md.
* the reverse model of a task (``multi30k-de-en`` -> ``multi30k-en-de``) for the symmetric methods.
* gold alignments from the task's own test pairs or from uploaded files, scored for several
  aligners side by side.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from attnviz.data import Link, Pair, Words, join_pieces, load_corpus
from attnviz.errors import DataError
from attnviz.evaluation import AlignmentCounts
from attnviz.links import eflomal as eflomal_align
from attnviz.links import goldfile, textfile
from attnviz.links.extract import reverse_task
from attnviz.links.goldfile import GoldAlignment
from attnviz.store import ModelEntry

SAMPLE_PAIRS = 2000
FAST_EFLOMAL = {"n_samplers": 1, "rel_iterations": 0.5}
EFLOMAL_METHOD = "grow-diag-final-and"
MAX_GOLD_PAIRS = 1000  # more is a job for `python -m attnviz align-eval`


def word_pairs(pairs: Iterable[Pair], n: int | None = None) -> list[tuple[Words, Words]]:
    """Up to ``n`` pairs as lowercased words (subword pieces joined), pairs with an empty side left
    out: the text eflomal learns from next to the sentences it aligns."""
    out = []
    for pair in pairs:
        if n is not None and len(out) >= n:
            break
        src, tgt = join_pieces(pair.source_tokens), join_pieces(pair.target_tokens)
        if src and tgt:
            out.append(([w.lower() for w in src], [w.lower() for w in tgt]))
    return out


def training_sample(spec: str, options: dict) -> list[tuple[Words, Words]]:
    """Up to :data:`SAMPLE_PAIRS` training pairs of a data set (``spec`` and load options) as lowercased
    words: the text eflomal learns from beside the pairs it aligns. Loaded as that many, not the whole data
    set (a built-in task generates no more, Multi30k reads its train split alone and draws its seeded
    sample), so any of the set's pairs may be among them."""
    asked = options.get("n_train")
    n_train = SAMPLE_PAIRS if asked is None else min(asked, SAMPLE_PAIRS)
    small = {**options, "n_train": n_train, "n_valid": 0, "n_test": 0, "split": "train"}
    return word_pairs(load_corpus(spec, **small).train, SAMPLE_PAIRS)


def eflomal_links(
    pairs: list[tuple[Words, Words]], sample: list[tuple[Words, Words]] = (), method: str = EFLOMAL_METHOD
) -> list[list[Link]]:
    """eflomal's links for each pair of ``pairs``, trained on ``sample`` plus ``pairs`` with the quick
    settings of :data:`FAST_EFLOMAL`. Words are compared lowercased, as in :func:`word_pairs`."""
    lowered = [([w.lower() for w in src], [w.lower() for w in tgt]) for src, tgt in pairs]
    return eflomal_align.run_eflomal(lowered, list(sample), method=method, **FAST_EFLOMAL)


def reverse_entry(models: list[ModelEntry], entry: ModelEntry) -> ModelEntry | None:
    """The catalog entry of a model of the opposite direction to ``entry``: one of the same score and
    style when there is one, else the first listed; ``None`` when the reverse task has no model."""
    task = reverse_task(entry.task or "")
    found = [m for m in models if task and m.task == task]
    same = [m for m in found if (m.score, m.style) == (entry.score, entry.style)]
    return (same or found or [None])[0]


@dataclass
class GoldSet:
    """Tokenized sentence pairs and their gold links, with where they came from."""

    sources: list[Words]
    targets: list[Words]
    gold: list[GoldAlignment]
    origin: str  # for the page: "toy-fr test split (500 pairs)", an uploaded file's name
    convention: str = ""  # how a gold file was read (GoldFile.convention); empty for built-in gold
    warnings: list[str] = field(default_factory=list)

    @property
    def lengths(self) -> list[tuple[int, int]]:
        return [(len(s), len(t)) for s, t in zip(self.sources, self.targets, strict=True)]


def _check_size(n: int) -> None:
    if n > MAX_GOLD_PAIRS:
        raise DataError(
            f"{n} sentence pairs are more than the app scores ({MAX_GOLD_PAIRS}); score a part of them here, "
            "or all with `python -m attnviz align-eval`"
        )


def gold_of_pairs(pairs: list[Pair], origin: str) -> GoldSet:
    """The gold links a data set ships with (toy-fr's test split): pairs without gold are refused."""
    missing = next((k for k, p in enumerate(pairs, start=1) if p.sure is None), None)
    if missing is not None:
        raise DataError(f"{origin}: pair {missing} has no gold alignment; upload a gold file instead")
    _check_size(len(pairs))
    gold = []
    for p in pairs:
        g = GoldAlignment()
        for link in p.possible or ():
            g.add(tuple(link), sure=False)
        for link in p.sure:
            g.add(tuple(link), sure=True)
        gold.append(g)
    return GoldSet([list(p.source_tokens) for p in pairs], [list(p.target_tokens) for p in pairs], gold, origin)


def gold_of_upload(
    gold_lines: list[str],
    gold_name: str,
    fmt: str = "auto",
    base: int | str = "auto",
    sentences: tuple[list[str], list[str] | None] | None = None,
    names: tuple[str, str | None] = ("source file", "target file"),
    fallback: list[Pair] | None = None,
) -> GoldSet:
    """A gold file's links (format ``fmt`` and index ``base``, each given or ``"auto"``) for the sentence
    pairs of ``sentences``: the source and target files' lines, or a ``source ||| target`` bitext's lines
    and ``None``. Without them, a one-line-a-pair file of as many lines as ``fallback`` has pairs is read
    on those pairs.

    Every problem raises :class:`DataError` naming the file and line (from :mod:`attnviz.links.goldfile`).
    """
    if sentences is not None:
        sources, targets = textfile.sentence_pairs(sentences[0], sentences[1], names)
        origin = gold_name
    elif fallback and len(gold_lines) == len(fallback) and goldfile.detect_format(gold_lines, gold_name) != "naacl":
        sources, targets = [list(p.source_tokens) for p in fallback], [list(p.target_tokens) for p in fallback]
        origin = f"{gold_name} on the task's {len(fallback)} test pairs"
    else:
        have = f"the task's test split has {len(fallback)} pairs" if fallback else "the task has no test pairs here"
        raise DataError(
            f"{gold_name}: upload the sentences too ({len(gold_lines)} gold lines; {have}, and only a file of one "
            "line a pair, as many lines, can use them)"
        )
    _check_size(len(sources))
    textfile.check_pairs(sources, targets, (names[0], names[1] or names[0]))
    lengths = [(len(s), len(t)) for s, t in zip(sources, targets, strict=True)]
    read = goldfile.parse_gold(gold_lines, lengths, fmt, base, name=gold_name)
    return GoldSet(sources, targets, read.alignments, origin, read.convention(), read.warnings)


def score_table(
    gold: list[GoldAlignment], predicted: dict[str, list[list[Link] | None]]
) -> tuple[list[dict], list[dict]]:
    """Precision, recall and AER of each aligner (name -> links per sentence, ``None`` for a pair it
    skipped) against ``gold``: ``(corpus rows, one per aligner; per-sentence rows, one per pair with
    each aligner's columns)``."""
    corpus, sentences = [], [{"pair": k} for k in range(len(gold))]
    for name, links in predicted.items():
        total, per_sentence = goldfile.score_links(links, gold)
        scored = sum(c is not None for c in per_sentence)
        corpus.append(
            {"aligner": name, **_row(total), "pairs": scored, "links": total.predicted, "sure links": total.sure}
        )
        for row, counts in zip(sentences, per_sentence, strict=True):
            if counts is not None:  # None: a pair the model could not read, left out
                row.update({f"{name} {key}": value for key, value in _row(counts).items() if key != "F1"})
    return corpus, sentences


def _row(c: AlignmentCounts) -> dict:
    return {
        "precision": round(c.precision, 3),
        "recall": round(c.recall, 3),
        "F1": round(c.f1, 3),
        "AER": round(c.aer, 3),
    }


def agreement(a: Iterable[Link], b: Iterable[Link]) -> float:
    """F1 of two link sets, either taken as the reference (the measure is symmetric); 1.0 when both are empty."""
    a, b = set(a), set(b)
    if not a and not b:
        return 1.0
    return 2 * len(a & b) / (len(a) + len(b))
