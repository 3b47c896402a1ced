"""Which rows of a single file (a local table, a Hub split) ``load_corpus`` keeps, found without
tokenizing them: the rows its length filter and its duplicate check keep, so that a split asked for
alone (``load_corpus(..., split="test", first=N)``, as ``attnviz evaluate --n N`` asks) tokenizes its
own pairs and nothing else."""

from __future__ import annotations

from attnviz.data.corpora import RawPairs
from attnviz.data.tokenize import Tokenizer


def kept_rows(
    rows: RawPairs, tokenizers: tuple[Tokenizer, Tokenizer], min_len: int, max_len: int | None, dedupe: bool
) -> tuple[list[int], int, int]:
    """The positions of the rows whose pairs the filter of ``load_corpus`` keeps (each side ``min_len`` to
    ``max_len`` tokens; a repeat of a kept pair dropped when ``dedupe``), in order, and how many it drops
    for their length and as duplicates: what filtering every row's pair gives, the same notes included."""
    source, target = tokenizers
    kept: list[int] = []
    seen: set[tuple[str, str]] = set()
    long_ = dups = 0
    for k, (s, t) in enumerate(rows):
        if not (source.count_within(s, min_len, max_len) and target.count_within(t, min_len, max_len)):
            long_ += 1
            continue
        if dedupe and (s, t) in seen:
            dups += 1
            continue
        seen.add((s, t))
        kept.append(k)
    return kept, long_, dups
