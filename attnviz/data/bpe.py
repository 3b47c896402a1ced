"""Subword units by byte-pair encoding (Sennrich, Haddow & Birch 2016).

``learn_bpe`` starts from each word's characters (each with its combining marks; the last one
marked as word-final) and repeatedly merges the most frequent adjacent pair of symbols;
``BPE.segment`` replays the merges, lowest rank first, on a new word. Pieces that do not end a word carry the
continuation marker ``@@`` (``orangefarbenen`` -> ``orange@@ farb@@ enen``), so a sequence of
pieces joins back into words without any other information. A word the training data never
showed still splits into known pieces (at worst its characters): far fewer ``<unk>``.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from itertools import pairwise

from attnviz.data.marks import CLUSTER

MARK = "@@"  # ends every piece that does not end its word
_END = "</w>"  # word-final symbol suffix, used only while learning and segmenting
MAX_WORD_CHARS = 64  # longer "words" (pasted junk) stay whole: segmenting them is quadratic
_CACHE_LIMIT = 200_000

Merge = tuple[str, str]
_CLUSTER_RE = re.compile(CLUSTER, re.DOTALL)


def _symbols(word: str) -> list[str]:
    """The word's characters as a reader sees them (:data:`attnviz.data.marks.CLUSTER`: a piece never
    starts with a mark or splits an emoji sequence), the last one marked as word-final."""
    chars = _CLUSTER_RE.findall(word)
    return [*chars[:-1], chars[-1] + _END]


def _merge_pair(symbols: list[str], pair: Merge) -> list[str]:
    """Every left-to-right occurrence of ``pair`` in ``symbols`` replaced by its merge."""
    out, i, a, b = [], 0, pair[0], pair[1]
    while i < len(symbols):
        if i + 1 < len(symbols) and symbols[i] == a and symbols[i + 1] == b:
            out.append(a + b)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


def learn_bpe(words: Iterable[str], merges: int, min_count: int = 2) -> list[Merge]:
    """Up to ``merges`` merge operations learned from a stream of word tokens.

    Ties between equally frequent pairs go to the alphabetically first, so the result is
    reproducible. Learning stops early when no pair occurs ``min_count`` times.
    """
    counts = Counter(w for w in words if w and len(w) <= MAX_WORD_CHARS)
    vocab = [(_symbols(w), c) for w, c in sorted(counts.items())]  # [(symbols, count)]
    pair_counts: Counter[Merge] = Counter()
    where: defaultdict[Merge, set[int]] = defaultdict(set)  # pair -> words that (may) hold it
    for i, (syms, c) in enumerate(vocab):
        for pair in pairwise(syms):
            pair_counts[pair] += c
            where[pair].add(i)
    heap = [(-c, pair) for pair, c in pair_counts.items()]
    heapq.heapify(heap)
    learned: list[Merge] = []
    while heap and len(learned) < merges:
        neg, pair = heapq.heappop(heap)
        if pair_counts.get(pair, 0) != -neg:
            continue  # stale entry: the pair's count changed and was pushed again
        if -neg < min_count:
            break
        learned.append(pair)
        touched: set[Merge] = set()
        for i in where.pop(pair, ()):
            syms, c = vocab[i]
            merged = _merge_pair(syms, pair)
            if len(merged) == len(syms):
                continue  # this word lost the pair to an earlier merge
            for old in pairwise(syms):
                pair_counts[old] -= c
                touched.add(old)
            for new in pairwise(merged):
                pair_counts[new] += c
                where[new].add(i)
                touched.add(new)
            vocab[i] = (merged, c)
        pair_counts.pop(pair, None)
        for p in touched - {pair}:
            if pair_counts[p] > 0:
                heapq.heappush(heap, (-pair_counts[p], p))
    return learned


class BPE:
    """Learned merges that segment words into pieces. Immutable; equal when the merges are."""

    def __init__(self, merges: Iterable[Merge]):
        self.merges: tuple[Merge, ...] = tuple((str(a), str(b)) for a, b in merges)
        self._ranks = {pair: rank for rank, pair in enumerate(self.merges)}
        self._hash = hash(self.merges)
        self._cache: dict[str, tuple[str, ...]] = {}

    @classmethod
    def learn(cls, words: Iterable[str], merges: int, min_count: int = 2) -> BPE:
        return cls(learn_bpe(words, merges, min_count))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BPE) and self.merges == other.merges

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"BPE({len(self.merges)} merges)"

    def segment(self, word: str) -> tuple[str, ...]:
        """The pieces of one word, ``@@`` on all but the last: ``"".join(p.removesuffix("@@"))`` is the word.
        A word that itself ends in ``@@`` reads as a piece; the tokenizer never gives one (it splits off every
        ``@``, and :meth:`~attnviz.data.tokenize.Tokenizer.cut_words` refuses such a word)."""
        if not word or len(word) > MAX_WORD_CHARS:
            return (word,)
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        syms = _symbols(word)
        while len(syms) > 1:
            ranked = [(self._ranks.get(pair, len(self._ranks)), pair) for pair in pairwise(syms)]
            rank, pair = min(ranked)
            if rank == len(self._ranks):
                break  # no learned merge applies
            syms = _merge_pair(syms, pair)
        pieces = (*(s + MARK for s in syms[:-1]), syms[-1][: -len(_END)])
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        self._cache[word] = pieces
        return pieces

    def segment_all(self, words: Iterable[str]) -> list[str]:
        return [piece for word in words for piece in self.segment(word)]


def join_pieces(tokens: Iterable[str]) -> list[str]:
    """Glue ``@@`` pieces back into words (a dangling last piece becomes a word of its own)."""
    words, pending = [], ""
    for tok in tokens:
        if tok.endswith(MARK) and len(tok) > len(MARK):
            pending += tok[: -len(MARK)]
        else:
            words.append(pending + tok)
            pending = ""
    if pending:
        words.append(pending)
    return words


def copyable(source: list[str]) -> list[bool]:
    """Which source tokens (as typed, ``<eos>`` left out) an output ``<unk>`` may copy: those with a
    letter or a digit, since an ``<unk>`` stands for a word (punctuation is in every vocabulary); all
    of them when none has one."""
    words = [any(c.isalnum() for c in token) for token in source]
    return words if any(words) else [True] * len(source)


def word_spans(tokens: list[str]) -> list[tuple[int, int]]:
    """For each token, the ``[start, end)`` token span of the word it belongs to (pieces marked
    ``@@`` run on into the next token; a plain word is its own span)."""
    spans, start = [], 0
    for i, tok in enumerate(tokens):
        if not (tok.endswith(MARK) and len(tok) > len(MARK)) or i == len(tokens) - 1:
            spans.extend([(start, i + 1)] * (i + 1 - start))
            start = i + 1
    return spans


def copy_source_words(output: list[str], copies: dict[int, int], source: list[str]) -> list[str]:
    """Output tokens with each copied position (target index -> source index, e.g. an ``<unk>``)
    replaced by the whole source *word* there: with subword sources the pieces are joined, and a
    run of consecutive copies from the same word gives the word once (``Xylo@@ phon`` attended by
    two ``<unk>`` steps -> one ``Xylophon``)."""
    spans = word_spans(source)
    tokens, last_span = [], None
    for t, tok in enumerate(output):
        if t not in copies:
            tokens.append(tok)
            last_span = None
            continue
        span = spans[copies[t]]
        if span != last_span:
            tokens.append("".join(join_pieces(source[span[0] : span[1]])))
        last_span = span
    return tokens
