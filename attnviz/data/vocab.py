"""Vocabularies: token <-> id maps with fixed special tokens, saved as JSON with checkpoints."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

from attnviz.errors import CheckpointError, ConfigError

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<bos>", "<eos>"
SPECIALS = (PAD, UNK, BOS, EOS)
PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3
# control characters (a newline, a terminal escape) and line separators: attnviz's tokenizers never
# make a token with one
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


class Vocab:
    """An ordered list of tokens; ids 0-3 are always ``<pad> <unk> <bos> <eos>``."""

    def __init__(self, tokens: Sequence[str]):
        if tuple(tokens[: len(SPECIALS)]) != SPECIALS:
            raise CheckpointError(
                f"a vocabulary must start with {list(SPECIALS)}; this one starts with "
                f"{list(tokens[:4])}. Rebuild it with Vocab.build(...)."
            )
        if len(set(tokens)) != len(tokens):
            raise CheckpointError("a vocabulary lists a token twice; rebuild it with Vocab.build(...).")
        if _CONTROL.search("".join(tokens)):
            index, token = next((i, t) for i, t in enumerate(tokens) if _CONTROL.search(t))
            raise CheckpointError(
                f"vocabulary token {index}, {ascii(token)[:80]}, holds a control character (a newline, a "
                "terminal escape), which would reach a terminal or a file as one; attnviz's tokenizers never "
                "make one. Rebuild the vocabulary from text with Vocab.build(...)."
            )
        self.itos: list[str] = list(tokens)
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(self.itos)}

    @classmethod
    def build(
        cls,
        sentences: Iterable[Sequence[str]],
        min_freq: int = 1,
        max_size: int | None = None,
    ) -> Vocab:
        """Count tokens over tokenized sentences; keep those seen ``min_freq`` times or more.

        The most frequent come first (ties broken alphabetically, so builds are reproducible);
        ``max_size`` caps the total size, special tokens included.
        """
        if min_freq < 1:
            raise ConfigError(f"min_freq must be at least 1, got {min_freq}")
        if max_size is not None and max_size <= len(SPECIALS):
            raise ConfigError(
                f"max_vocab (--max-vocab) must be {len(SPECIALS) + 1} or more, as {len(SPECIALS)} places go to "
                f"{', '.join(SPECIALS)}; got {max_size}"
            )
        counts = Counter(tok for sent in sentences for tok in sent)
        for special in SPECIALS:
            counts.pop(special, None)
        kept = sorted((t for t, c in counts.items() if c >= min_freq), key=lambda t: (-counts[t], t))
        if max_size is not None:
            kept = kept[: max_size - len(SPECIALS)]
        return cls([*SPECIALS, *kept])

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocab) and self.itos == other.itos

    def encode(self, tokens: Sequence[str], bos: bool = False, eos: bool = False) -> list[int]:
        """Map tokens to ids (unknown ones to ``UNK_ID``), optionally framed by BOS/EOS."""
        ids = [self.stoi.get(t, UNK_ID) for t in tokens]
        return ([BOS_ID] if bos else []) + ids + ([EOS_ID] if eos else [])

    def decode(self, ids: Iterable[int], strip: bool = True) -> list[str]:
        """Map ids to tokens; with ``strip``, stop at EOS and drop PAD/BOS."""
        out = []
        for i in ids:
            i = int(i)
            if strip and i == EOS_ID:
                break
            if strip and i in (PAD_ID, BOS_ID):
                continue
            out.append(self.itos[i] if 0 <= i < len(self.itos) else UNK)
        return out

    def to_list(self) -> list[str]:
        return list(self.itos)

    @classmethod
    def from_list(cls, tokens: Sequence[str]) -> Vocab:
        if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
            raise CheckpointError("a saved vocabulary must be a list of strings or one token per line")
        return cls(tokens)
