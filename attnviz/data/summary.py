"""Tables and numbers about a corpus for the app's Data page and ``data --summary``.

pandas is imported where a table is made: reading a corpus (which imports this package) needs none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

from attnviz.data.pairs import Corpus, Pair
from attnviz.data.vocab import SPECIALS, Vocab


def pairs_frame(pairs: Sequence[Pair]) -> pd.DataFrame:
    """One row per pair: texts, token counts and the number of gold links (NA when unknown)."""
    import pandas as pd

    return pd.DataFrame(
        {
            "source": [p.source for p in pairs],
            "target": [p.target for p in pairs],
            "source_len": pd.array([len(p.source_tokens) for p in pairs], dtype="Int64"),
            "target_len": pd.array([len(p.target_tokens) for p in pairs], dtype="Int64"),
            "sure_links": pd.array([None if p.sure is None else len(p.sure) for p in pairs], dtype="Int64"),
            "possible_links": pd.array([None if p.possible is None else len(p.possible) for p in pairs], dtype="Int64"),
        }
    )


def _length_stats(lengths: Sequence[int]) -> dict[str, float]:
    if len(lengths) == 0:
        return {"min": 0, "mean": 0.0, "median": 0.0, "p95": 0.0, "max": 0}
    import pandas as pd

    s = pd.Series(lengths, dtype="int64")
    return {
        "min": int(s.min()),
        "mean": round(float(s.mean()), 2),
        "median": float(s.median()),
        "p95": round(float(s.quantile(0.95)), 2),
        "max": int(s.max()),
    }


def _unknown_rate(sentences: list[list[str]], vocab: Vocab) -> float:
    tokens = [t for sent in sentences for t in sent]
    return unknown_rate(sum(t not in vocab for t in tokens), len(tokens))


def unknown_rate(unknown: int, tokens: int) -> float:
    return round(unknown / tokens, 4) if tokens else 0.0


def summarize(corpus: Corpus, source_vocab: Vocab | None = None, target_vocab: Vocab | None = None) -> dict:
    """Counts per split, length statistics, vocabulary sizes and the unknown-token rate on valid.

    Vocabularies default to all tokens of the training split; pass a model's vocabularies to
    see how much of the validation data that model cannot read.
    """
    if source_vocab is None or target_vocab is None:
        built_source, built_target = corpus.build_vocabs()
        source_vocab = source_vocab or built_source
        target_vocab = target_vocab or built_target
    splits = {name: corpus.split(name) for name in ("train", "valid", "test")}
    return summary_of(
        corpus,
        {n: [len(p.source_tokens) for p in ps] for n, ps in splits.items()},
        {n: [len(p.target_tokens) for p in ps] for n, ps in splits.items()},
        (len(source_vocab) - len(SPECIALS), len(target_vocab) - len(SPECIALS)),
        (
            _unknown_rate([p.source_tokens for p in corpus.valid], source_vocab),
            _unknown_rate([p.target_tokens for p in corpus.valid], target_vocab),
        ),
    )


def summary_of(
    corpus: Corpus,
    source_lengths: dict[str, Sequence[int]],
    target_lengths: dict[str, Sequence[int]],
    vocab_sizes: tuple[int, int],
    unknown_rates: tuple[float, float],
) -> dict:
    """The summary's fields from its parts: token counts per pair by split, vocabulary sizes (without
    the special tokens) and valid's unknown rates, source then target. ``corpus`` gives the name,
    the gold flag, the tokenizers and the notes (its splits may be empty: the streamed summary
    keeps no pairs)."""
    return {
        "name": corpus.name,
        "has_gold": corpus.has_gold,
        "pairs": {name: len(lengths) for name, lengths in source_lengths.items()},
        "source_length": {n: _length_stats(lengths) for n, lengths in source_lengths.items()},
        "target_length": {n: _length_stats(lengths) for n, lengths in target_lengths.items()},
        "source_vocab_size": vocab_sizes[0],
        "target_vocab_size": vocab_sizes[1],
        "valid_source_unknown_rate": unknown_rates[0],
        "valid_target_unknown_rate": unknown_rates[1],
        "tokenizers": {"source": corpus.source_tokenizer.describe(), "target": corpus.target_tokenizer.describe()},
        "notes": list(corpus.notes),
    }
