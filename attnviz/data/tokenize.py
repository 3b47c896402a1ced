"""Tokenizers: characters (dates, symbol tasks) or words with punctuation split off.

``split`` keeps what the user typed (the surface form shown in traces); ``normalize`` maps a
surface token to its vocabulary form (lowercased when asked). ``tokenize`` does both.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass

from attnviz.errors import CheckpointError, ConfigError

KINDS = ("word", "char")
# A word: letters/digits/marks with inner apostrophes or hyphens; anything else is one token.
_WORD_RE = re.compile(r"[^\W_]+(?:['\u2019\-][^\W_]+)*|\S", re.UNICODE)
_NO_SPACE_BEFORE = set(".,;:!?)]}%'\u2019\u00bb")
_NO_SPACE_AFTER = set("([{\u00ab")


def clean_text(text: str) -> str:
    """NFC-normalize and replace control characters (NUL included) by spaces."""
    text = unicodedata.normalize("NFC", text)
    return "".join(" " if unicodedata.category(c) in ("Cc", "Cs") and c != "\n" else c for c in text)


@dataclass(frozen=True)
class Tokenizer:
    """``kind="word"``: words and punctuation; ``kind="char"``: every character, spaces kept."""

    kind: str = "word"
    lowercase: bool = True

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ConfigError(f"unknown tokenizer kind {self.kind!r}; choose one of {KINDS}")

    def split(self, text: str) -> list[str]:
        """Surface tokens, exactly as typed (after cleaning control characters)."""
        text = clean_text(text)
        if self.kind == "char":
            return list(" ".join(text.split()))
        return _WORD_RE.findall(text)

    def normalize(self, token: str) -> str:
        return token.lower() if self.lowercase else token

    def tokenize(self, text: str) -> list[str]:
        return [self.normalize(t) for t in self.split(text)]

    def detokenize(self, tokens: list[str]) -> str:
        """Join tokens back into text (reattaching punctuation for words)."""
        if self.kind == "char":
            return "".join(tokens)
        out = ""
        for tok in tokens:
            if out and not (tok in _NO_SPACE_BEFORE or out[-1] in _NO_SPACE_AFTER):
                out += " "
            out += tok
        return out

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Tokenizer:
        try:
            return cls(kind=d["kind"], lowercase=bool(d["lowercase"]))
        except (KeyError, TypeError) as e:
            raise CheckpointError(f"a saved tokenizer needs 'kind' and 'lowercase', got {d!r}") from e
