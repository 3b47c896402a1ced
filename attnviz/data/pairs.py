"""The common interface of every data source: a ``Pair`` of sentences and a ``Corpus`` of splits.

Gold links are ``(source_index, target_index)`` over the token lists, the order of Pharaoh
``i-j`` files. ``sure`` links are certain; ``possible`` ones (a superset of ``sure``) are
acceptable, as in the AER definition of Och & Ney (2003).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from attnviz.data.tokenize import Tokenizer
from attnviz.data.vocab import Vocab
from attnviz.errors import ConfigError

Link = tuple[int, int]  # (source_index, target_index), 0-based
Words = list[str]  # one sentence as words (a text file's line split at spaces, or pieces joined)
SPLITS = ("train", "valid", "test")
_SPLIT_ALIASES = {"train": "train", "valid": "valid", "val": "valid", "validation": "valid", "test": "test"}


@dataclass
class Pair:
    """One source/target sentence pair with its tokens and, when known, its gold alignment."""

    source: str
    target: str
    source_tokens: list[str]
    target_tokens: list[str]
    sure: list[Link] | None = None
    possible: list[Link] | None = None

    @property
    def has_gold(self) -> bool:
        return self.sure is not None

    def to_dict(self) -> dict:
        """JSON-ready: links as ``[source_index, target_index]`` lists."""
        return {
            "source": self.source,
            "target": self.target,
            "source_tokens": self.source_tokens,
            "target_tokens": self.target_tokens,
            "sure": None if self.sure is None else [list(link) for link in self.sure],
            "possible": None if self.possible is None else [list(link) for link in self.possible],
        }


def make_pair(
    source: str,
    target: str,
    source_tokenizer: Tokenizer,
    target_tokenizer: Tokenizer,
    sure: Iterable[Link] | None = None,
    possible: Iterable[Link] | None = None,
) -> Pair:
    """Tokenize both sides; ``possible`` becomes the sorted union of ``sure`` and ``possible``."""
    sure_links = None if sure is None else sorted(set(sure))
    possible_links = None
    if sure_links is not None or possible is not None:
        possible_links = sorted(set(sure_links or []) | set(possible or []))
        sure_links = sure_links or []
    return Pair(
        source,
        target,
        source_tokenizer.tokenize(source),
        target_tokenizer.tokenize(target),
        sure_links,
        possible_links,
    )


def split_name(name: str) -> str:
    """``"train"``, ``"valid"`` or ``"test"`` for a split's name or alias (``"val"``, ``"validation"``)."""
    key = _SPLIT_ALIASES.get(name.strip().lower())
    if key is None:
        raise ConfigError(f"unknown split {name!r}; choose train, valid or test")
    return key


@dataclass
class Corpus:
    """Train/valid/test pairs from one source, the tokenizers that made them, and load notes."""

    name: str
    train: list[Pair]
    valid: list[Pair]
    test: list[Pair]
    source_tokenizer: Tokenizer
    target_tokenizer: Tokenizer
    has_gold: bool
    notes: list[str] = field(default_factory=list)
    example_text: str | None = None

    def __repr__(self) -> str:
        # a line a notebook can show: the pairs themselves are thousands
        gold = ", gold links" if self.has_gold else ""
        sizes = f"train={len(self.train)}, valid={len(self.valid)}, test={len(self.test)} pairs"
        return f"Corpus({self.name!r}, {sizes}{gold})"

    def split(self, name: str) -> list[Pair]:
        """The pairs of ``"train"``, ``"valid"`` (or ``"val"``, ``"validation"``) or ``"test"``."""
        return getattr(self, split_name(name))

    def example(self, known: Callable[[str], bool] | None = None) -> str:
        """A representative source sentence to prefill the app's text box.

        ``known(token)``, when given, prefers a sentence whose words are all in the vocabulary.
        """
        if self.example_text:
            return self.example_text
        for pairs in (self.test, self.valid, self.train):
            if pairs:
                # a sentence of typical length reads better than the first one, which may be odd
                lengths = sorted(len(p.source_tokens) for p in pairs[:200])
                median = lengths[len(lengths) // 2]
                typical = [p for p in pairs if len(p.source_tokens) == median]
                if known is not None:
                    typical = [p for p in typical if all(known(t) for t in p.source_tokens)] or typical
                return typical[0].source
        return ""

    def build_vocabs(self, min_freq: int = 1, max_size: int | None = None) -> tuple[Vocab, Vocab]:
        """Source and target vocabularies built from the training split."""
        return (
            Vocab.build((p.source_tokens for p in self.train), min_freq, max_size),
            Vocab.build((p.target_tokens for p in self.train), min_freq, max_size),
        )

    def __len__(self) -> int:
        return len(self.train) + len(self.valid) + len(self.test)


def to_pharaoh(links: Iterable[Link]) -> str:
    """Links as a Pharaoh line: ``"0-0 1-2 2-1"`` (source index - target index). The one reader of
    Pharaoh lines is :func:`attnviz.links.parse_pharaoh`."""
    return " ".join(f"{i}-{j}" for i, j in links)
