"""The summary of a corpus (``attnviz data --summary``) with a local table read in chunks.

``summarize(load_corpus(spec))`` holds every pair of the file as Python objects, several times the
file's size in memory. :func:`summarize_spec` gives the same summary for a local table while
holding one chunk of rows at a time, plus, per kept pair, its token ids (4 bytes a token), two
lengths and a 16-byte digest for finding duplicates: the same checks, the same filters, the same
seeded cut into train, valid and test, the same numbers. Other specs (tasks, Multi30k, the Hub)
are summarized from their corpus.
"""

from __future__ import annotations

import hashlib
import itertools
from array import array
from collections import defaultdict
from pathlib import Path

import numpy as np

from attnviz.data import corpora, tables
from attnviz.data.pairs import Corpus
from attnviz.data.spec import (
    _MULTI30K_RE,
    MAX_TOKENS,
    TASKS,
    check_max_len,
    filter_notes,
    load_corpus,
    split_indices,
    table_options,
)
from attnviz.data.summary import summarize, summary_of, unknown_rate
from attnviz.data.tokenize import Tokenizer
from attnviz.data.vocab import SPECIALS

CHUNK_ROWS = 20_000  # rows read and tokenized at a time
VALID_FRACTION = TEST_FRACTION = 0.05  # load_corpus's defaults
TRAIN, VALID, TEST = 0, 1, 2


class _Side:
    """One side's tokens of the kept pairs: an id per distinct token, the ids pair after pair, a length per pair."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = defaultdict(itertools.count().__next__)  # a new token gets the next id
        self.tokens = array("i")
        self.lengths = array("i")

    def add(self, tokens: list[str]) -> None:
        ids = self.ids
        self.tokens.extend([ids[t] for t in tokens])
        self.lengths.append(len(tokens))

    def numbers(self, labels: np.ndarray) -> tuple[dict[str, np.ndarray], int, float]:
        """Token counts per pair by split, the train vocabulary's size (no specials) and valid's unknown rate."""
        lengths = np.frombuffer(self.lengths, dtype=np.int32).astype(np.int64)  # [pairs]
        by_token = np.repeat(labels, lengths)  # [tokens]: the split of each token's pair
        ids = np.frombuffer(self.tokens, dtype=np.int32)  # [tokens]
        known = np.bincount(ids[by_token == TRAIN], minlength=len(self.ids)) > 0  # [distinct tokens]
        special = np.zeros(len(self.ids), dtype=bool)
        special[[self.ids[s] for s in SPECIALS if s in self.ids]] = True  # `in` first: no new ids
        valid = ids[by_token == VALID]
        rate = unknown_rate(int((~(known | special))[valid].sum()), len(valid))
        split_lengths = {name: lengths[labels == k] for name, k in (("train", TRAIN), ("valid", VALID), ("test", TEST))}
        return split_lengths, int((known & ~special).sum()), rate


def is_table_spec(spec: str) -> bool:
    """Whether ``spec`` names a local table (what :func:`attnviz.data.load_corpus` reads with ``load_table``)."""
    spec = spec.strip()
    if spec in TASKS or _MULTI30K_RE.match(spec) or spec.startswith("hf:"):
        return False
    return "?" in spec or spec.lower().endswith(tuple(tables.TABLE_FORMATS))


def summarize_spec(
    spec: str,
    *,
    seed: int = 0,
    max_len: int | None = None,
    max_bytes: int = corpora.DEFAULT_MAX_BYTES,
    chunk_rows: int = CHUNK_ROWS,
) -> dict:
    """``summarize(load_corpus(spec, seed=seed, max_len=max_len, max_bytes=max_bytes))``, a local
    table read ``chunk_rows`` rows at a time (see the module docstring)."""
    spec = spec.strip()
    if not is_table_spec(spec):
        return summarize(load_corpus(spec, seed=seed, max_len=max_len, max_bytes=max_bytes))
    check_max_len(max_len)
    path, opts = table_options(spec)
    min_len, max_len = 1, MAX_TOKENS if max_len is None else max_len
    tokenizer = Tokenizer("word", lowercase=True)
    name, where = f"file:{path}", str(Path(path))
    source, target = _Side(), _Side()
    seen: set[bytes] = set()
    rows = empty = long_ = dups = 0
    empty_lines: list[int] = []
    with tables.open_records(path, opts["src"], opts["tgt"], fmt=opts.get("format"), max_bytes=max_bytes) as opened:
        records, first, unit = opened
        for start in range(0, len(records), chunk_rows):
            part = records.select(range(start, min(start + chunk_rows, len(records))))
            for i, (s, t) in enumerate(corpora.read_rows(part, opts["src"], opts["tgt"], where, first + start, unit)):
                if not s.strip() or not t.strip():
                    empty += 1
                    if len(empty_lines) < 5:
                        empty_lines.append(first + start + i)
                    continue
                s_tokens, t_tokens = tokenizer.tokenize(s), tokenizer.tokenize(t)
                if min(len(s_tokens), len(t_tokens)) < min_len or max(len(s_tokens), len(t_tokens)) > max_len:
                    long_ += 1
                    continue
                key = hashlib.blake2b(f"{len(s)}:{s}{t}".encode(), digest_size=16).digest()
                if key in seen:
                    dups += 1
                    continue
                seen.add(key)
                source.add(s_tokens)
                target.add(t_tokens)
            rows += len(part)
    notes: list[str] = []
    corpora.no_rows(where, rows)
    if empty:
        corpora.empty_rows(where, empty_lines, empty, rows, "drop", notes)
    filter_notes(name, long_, dups, min_len, max_len, notes)
    train, valid, test = split_indices(len(seen), seed, None, None, (VALID_FRACTION, TEST_FRACTION))
    labels = np.full(len(seen), TRAIN, dtype=np.int8)  # [pairs]
    labels[valid], labels[test] = VALID, TEST
    del train, valid, test
    src_lengths, src_vocab, src_unknown = source.numbers(labels)
    tgt_lengths, tgt_vocab, tgt_unknown = target.numbers(labels)
    corpus = Corpus(name, [], [], [], tokenizer, tokenizer, False, notes)
    return summary_of(corpus, src_lengths, tgt_lengths, (src_vocab, tgt_vocab), (src_unknown, tgt_unknown))
