"""Word links from attention read out of files, and their score against gold alignments.

Each attention file holds one sentence pair; a list of them, in order, is a corpus a gold file
(Pharaoh or NAACL, one pair per line or sentence number) scores, matrix by matrix: which layer,
head or model aligns best.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from attnviz.data import EOS
from attnviz.decoding import Alignment
from attnviz.errors import DataError, InputError
from attnviz.external.attention_file import AttentionFile
from attnviz.links import DIRECTIONAL, WordAlignment, directional_links, for_reading, parse_gold, score_table


def word_links(al: Alignment, method: str = "argmax", threshold: float = 0.3) -> WordAlignment:
    """Word links of one matrix: subword pieces merged, the source ``<eos>`` column hidden (a row
    parked there links nothing), the target ``<eos>`` row dropped; then ``argmax`` per target word,
    every cell of at least ``threshold``, or ``dtw``'s monotonic path."""
    if method not in DIRECTIONAL:
        raise InputError(
            f"an attention file gives one direction; choose --method {' or '.join(DIRECTIONAL)} (not {method!r})"
        )
    shown = for_reading(al, hide=al.source_tokens[-1:] == [EOS], merge=True)
    words = shown.alignment
    weights = np.asarray(words.weights, dtype=np.float64)  # [tgt_words, src_words]
    targets = list(words.target_tokens)
    if targets[-1:] == [EOS]:
        weights, targets = weights[:-1], targets[:-1]
    links = directional_links(weights, method, threshold)  # the one question, answered where the models' is
    return WordAlignment(list(words.source_tokens), targets, sorted(links), method, shown.rule)


def matrix_names(files: Sequence[AttentionFile], names: Sequence[str] | None = None) -> list[str]:
    """The matrices to score: ``names`` (or the first file's), each present in every file."""
    if not files:
        raise InputError("no attention file given")
    wanted = list(names) if names else list(files[0].alignments)
    for k, f in enumerate(files, start=1):
        check_names(f, wanted, k)
    return wanted


def check_names(f: AttentionFile, names: Sequence[str], k: int) -> None:
    """Raise :class:`DataError` when attention file number ``k`` lacks one of ``names``."""
    missing = [n for n in names if n not in f.alignments]
    if missing:
        have = ", ".join(repr(n) for n in list(f.alignments)[:8])
        raise DataError(f"attention file {k} has no matrix named {missing[0]!r}; it has {have}")


def score_files(
    files: Iterable[AttentionFile],
    gold_lines: list[str],
    fmt: str = "auto",
    base: int | str = "auto",
    method: str = "argmax",
    threshold: float = 0.3,
    names: Sequence[str] | None = None,
    gold_name: str = "gold file",
) -> tuple[list[dict], list[dict]]:
    """Precision, recall and AER of each matrix's word links against ``gold_lines`` (one sentence pair
    per file, in order): ``(one row per matrix, one row per sentence)`` as
    :func:`attnviz.links.score_table` makes them. The matrices are ``names`` (default: the first
    file's), each in every file. ``files`` is read once, one at a time (a generator of files read from
    disk works): only each file's links are kept."""
    wanted = list(names) if names else None
    predicted: dict[str, list] = {}
    lengths = []
    for k, f in enumerate(files, start=1):
        if wanted is None:
            wanted = list(f.alignments)
        check_names(f, wanted, k)
        shapes = set()
        for n in wanted:
            wa = word_links(f.alignments[n], method, threshold)
            predicted.setdefault(n, []).append(wa.links)
            shapes.add((len(wa.source_words), len(wa.target_words)))
        if len(shapes) > 1:
            raise DataError(
                f"attention file {k}: its matrices read as different numbers of words {sorted(shapes)}; "
                "score matrices of the same sentence pair together"
            )
        lengths.append(shapes.pop())
    if not lengths:
        raise InputError("no attention file given")
    gold = parse_gold(gold_lines, lengths, fmt, base, name=gold_name)
    return score_table(gold.alignments, predicted)
