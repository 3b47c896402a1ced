"""Tokenizers: characters (dates, symbol tasks) or words with punctuation split off.

``split`` keeps what the user typed (the surface form shown in traces); ``normalize`` maps a
surface token to its vocabulary form (lowercased when asked). ``tokenize`` does both. A word
tokenizer with ``bpe`` splits each word further into subword pieces (``attnviz.data.bpe``).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from attnviz.data.bpe import BPE, MARK, join_pieces
from attnviz.data.marks import FLAG, MARKS, MODIFIER
from attnviz.data.vocab import UNK
from attnviz.errors import CheckpointError, ConfigError, InputError

KINDS = ("word", "char")
VERSION = 2  # bump when any text is cut differently: cached tokens (attnviz.data.token_cache) carry it
_LETTER = f"[^\\W_][{MARKS}]*"  # a letter or digit with the combining marks that follow it
# A word: letters and digits (each with its marks), joined by inner apostrophes, hyphens or zero-width
# (non-)joiners; a flag (two regional indicators); anything else one token with its marks, its skin
# tone and the characters a zero-width joiner adds to it (an emoji sequence).
_WORD_RE = re.compile(
    f"(?:{_LETTER})+(?:['\u2019\\-\u200c\u200d](?:{_LETTER})+)*"
    f"|{FLAG}"
    f"|\\S[{MARKS}]*{MODIFIER}?(?:\u200d\\S[{MARKS}]*{MODIFIER}?)*",
    re.UNICODE,
)
# Cut 3: as cut 2, and a Chinese character (a CJK ideograph, Han in Japanese too) is a word of its own, as
# BERT's tokenizer cuts Chinese; Hebrew's maqaf, geresh and gershayim join letters (בית־הספר, ארה״ב) as a
# hyphen does; invisible format characters (direction marks, soft hyphen, zero-width space, a BOM) are no
# token: they only part the words around them.
HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"  # CJK ideographs, all planes 2-3
INVISIBLE = "\u00ad\u061c\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff"
_LETTER_3 = f"[^\\W_{HAN}][{MARKS}]*"  # a letter or digit but a Chinese character, with its marks
_WORD_RE_3 = re.compile(
    f"(?:{_LETTER_3})+(?:['\u2019\\-\u200c\u200d\u05be\u05f3\u05f4](?:{_LETTER_3})+)*"
    f"|[{HAN}][{MARKS}]*"
    f"|{FLAG}"
    f"|(?![{INVISIBLE}])\\S[{MARKS}]*{MODIFIER}?(?:\u200d\\S[{MARKS}]*{MODIFIER}?)*",
    re.UNICODE,
)
# Cut 1: marks and emoji sequences split from their letters (a checkpoint that records cut 1 reads
# text that way: see Tokenizer.word_cut)
_WORD_RE_1 = re.compile(r"[^\W_]+(?:['\u2019\-][^\W_]+)*|\S", re.UNICODE)
# a word tokenizer's cuts: 3 cuts Chinese characters, joins Hebrew words and skips invisible marks, 2 keeps
# marks and emoji sequences whole, 1 splits them from their letters
CUTS = (1, 2, 3)
_WORD_RES = {1: _WORD_RE_1, 2: _WORD_RE, 3: _WORD_RE_3}
UNNAMED_CUT = 2  # the cut of a checkpoint that records none (unless its vocabulary says 1)
# a token only cut 1 gives: one starting with a mark, a joiner or a skin tone, or half a flag
_CUT_1_TOKEN = re.compile(f"[{MARKS}\u200c\u200d]|{MODIFIER}|[\U0001f1e6-\U0001f1ff]$")
# Latin, Arabic (، ؛ ؟), Devanagari (। ॥) and CJK (full-width) punctuation that ends or opens a phrase
_NO_SPACE_BEFORE = set(
    ".,;:!?)]}%'\u2019\u00bb\u060c\u061b\u061f\u0964\u0965\u3001\u3002\uff01\uff09\uff0c\uff1a\uff1b\uff1f"
)
_NO_SPACE_BEFORE |= set("\u300d\u300f\u3011\u3015\u3009\u300b")  # 」』】〕〉》
_NO_SPACE_AFTER = set("([{\u00ab\uff08\u300c\u300e\u3010\u3014\u3008\u300a")  # （「『【〔〈《
# double quotes: '"' opens and closes by turns; German „ opens and “ closes it, English “ opens and ” closes
_QUOTES = frozenset('"\u201e\u201c\u201d')
_CLOSER = {'"': '"', "\u201e": "\u201c", "\u201c": "\u201d"}


def _closes_quote(tok: str, opened: list[str]) -> bool:
    """Whether ``tok`` closes the quote last opened in ``opened`` (the quotes still open, updated): a
    closing quote hugs the word before it, an opening one the word after it."""
    if tok not in _QUOTES:
        return False
    if opened and _CLOSER[opened[-1]] == tok:
        opened.pop()
        return True
    if tok == "\u201d":  # a closing quote whatever came before
        return True
    opened.append(tok)
    return False


# text written without spaces: Chinese characters, kana and CJK punctuation join their neighbours so
_UNSPACED = re.compile(f"[{HAN}\u3000-\u303f\u3040-\u30ff\uff00-\uffef]")
# Every control (Cc) and surrogate (Cs) code point but the newline. Unicode's stability policy
# fixes both categories; a test checks the class against unicodedata over every code point.
_CONTROL_RE = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


_DIRECTION_MARKS = re.compile("[\u202a-\u202e\u2066-\u2069]")  # embeddings, overrides, isolates


def show_direction_marks(text: str) -> str:
    """``text`` with each mark that turns the direction of the text after it (U+202A-U+202E,
    U+2066-U+2069) written as its code point, ``[U+202E]``: shown in a page, such a mark in a
    token would turn the rest of its line around. Right-to-left letters and the plain marks
    U+200E/U+200F are left as they are."""
    return _DIRECTION_MARKS.sub(lambda m: f"[U+{ord(m.group()):04X}]", text)


def clean_text(text: str) -> str:
    """NFC-normalize and replace control characters (NUL included) and lone surrogates by spaces."""
    return _CONTROL_RE.sub(" ", unicodedata.normalize("NFC", text))


@dataclass(frozen=True)
class Tokenizer:
    """``kind="word"``: words and punctuation; ``kind="char"``: every character, spaces kept.

    With ``bpe`` (word tokenizers only) every word is cut into the subword pieces those merges
    give its normalized form; the surface pieces are the same cuts of the word as typed.
    """

    kind: str = "word"
    lowercase: bool = True
    bpe: BPE | None = None
    # 1: words cut as an older attnviz cut them (its checkpoints read text so); see :func:`cut_of`
    word_cut: int = CUTS[-1]

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ConfigError(f"unknown tokenizer kind {self.kind!r}; choose one of {KINDS}")
        if self.bpe is not None and self.kind != "word":
            raise ConfigError("subword units (bpe) need a word tokenizer")
        if self.word_cut not in CUTS:
            raise ConfigError(f"unknown word cut {self.word_cut!r}; choose one of {CUTS}")

    def _words(self, text: str) -> list[str]:
        text = clean_text(text)
        if self.kind == "char":
            return list(" ".join(text.split()))
        return _WORD_RES[self.word_cut].findall(text)

    def split(self, text: str) -> list[str]:
        """Surface tokens, exactly as typed (after cleaning control characters)."""
        return self.cut(text)[0]

    def cut(self, text: str) -> tuple[list[str], list[str]]:
        """Surface tokens and their vocabulary forms, one for one, from a single pass over ``text``."""
        words = self._words(text)
        if self.bpe is None:
            return words, [self.normalize(w) for w in words]
        surface, normal = [], []
        for word in words:
            form = self.normalize(word)
            pieces = self.bpe.segment(form)
            normal.extend(pieces)
            if len(pieces) == 1 or len(form) != len(word):
                surface.extend(pieces if len(pieces) > 1 else [word])  # lowercasing changed the length: show pieces
                continue
            start = 0
            for piece in pieces:
                end = start + len(piece.removesuffix(MARK))
                surface.append(word[start:end] + piece[end - start :])
                start = end
        return surface, normal

    def cut_words(self, words: Sequence[str]) -> tuple[list[str], list[str]]:
        """Surface tokens and vocabulary forms of a sentence given as words (pre-tokenized text, as
        gold sets come): each word is cut on its own, never across words. The tokens of a word the
        tokenizer splits (``Mr.`` -> ``Mr`` ``.``, or subword pieces) carry ``@@`` on all but the
        last in the surface, so they join back into the given word (:func:`~attnviz.data.bpe.word_spans`);
        a word the tokenizer keeps nothing of is one ``<unk>``. Raises :class:`InputError` for a
        character tokenizer (its tokens are not words) and for a word ending in ``@@``."""
        if self.kind != "word":
            raise InputError("this model reads characters, not words; given words need a model with a word tokenizer")
        surface, normal = [], []
        for word in words:
            if word.endswith(MARK) and len(word) > len(MARK):
                raise InputError(
                    f"the word {word[:40]!r} ends with {MARK}, the subword mark; join subword pieces into words first"
                )
            shown, forms = self.cut(word)
            if not shown:
                shown, forms = [word], [UNK]
            surface.extend(t if t.endswith(MARK) or k == len(shown) - 1 else t + MARK for k, t in enumerate(shown))
            normal.extend(forms)
        return surface, normal

    def normalize(self, token: str) -> str:
        return token.lower() if self.lowercase else token

    def recut(self, tokens: Sequence[str]) -> tuple[list[str], list[str]] | None:
        """Cut the words that ``tokens`` join into (their ``@@`` pieces glued) again, as typed text
        (:meth:`cut`) or as given words (:meth:`cut_words`), and return the cut that gives ``tokens``
        back, with its vocabulary forms; None when neither does (pieces merged for display, a decode's
        own segmentation, another tokenizer's tokens) or for a character tokenizer."""
        tokens, words = list(tokens), join_pieces(tokens)
        if self.kind != "word" or not words or any(w.endswith(MARK) for w in words):
            return None
        for cut in (self.cut(" ".join(words)), self.cut_words(words)):
            if cut[0] == tokens:
                return cut
        return None

    def forms_of(self, tokens: Sequence[str]) -> list[str]:
        """The vocabulary forms of surface tokens this tokenizer cut (:meth:`cut` or :meth:`cut_words`)
        or a model of it decoded, one for one. A ``@@`` that :meth:`cut_words` put on a word's tokens
        is not part of their forms (``Mr@@ .`` reads ``mr .``), while a subword piece keeps its own:
        with subwords the words are cut again (:meth:`recut`) to tell the two apart, and tokens that
        are not that cut are their forms as they stand."""
        if self.bpe is None:
            return [self.normalize(t[: -len(MARK)] if t.endswith(MARK) and len(t) > len(MARK) else t) for t in tokens]
        again = self.recut(tokens)
        return again[1] if again is not None else [self.normalize(t) for t in tokens]

    def count_within(self, text: str, low: int, high: int | None) -> bool:
        """Whether :meth:`tokenize` gives ``low`` to ``high`` (None: no bound) tokens of ``text``, the
        tokens counted only where the text's length does not settle it: each token of a word tokenizer
        without subwords is one character of the cleaned text or more."""
        if self.kind != "word" or self.bpe is not None:
            n = len(self.tokenize(text))
            return low <= n and (high is None or n <= high)
        cleaned, words = clean_text(text), _WORD_RES[self.word_cut]
        if len(cleaned) < low:
            return False
        if low <= 1 and (high is None or len(cleaned) <= high):
            return low < 1 or words.search(cleaned) is not None
        n = len(words.findall(cleaned))
        return low <= n and (high is None or n <= high)

    def tokenize(self, text: str) -> list[str]:
        """Vocabulary forms; always one per token of :meth:`split`."""
        if self.bpe is None:
            return [self.normalize(t) for t in self._words(text)]
        return self.bpe.segment_all(self.normalize(w) for w in self._words(text))

    def with_bpe(self, bpe: BPE | None) -> Tokenizer:
        return Tokenizer(self.kind, self.lowercase, bpe, self.word_cut)

    def detokenize(self, tokens: list[str]) -> str:
        """Join tokens back into text (reattaching punctuation for words)."""
        if self.kind == "char":
            return "".join(tokens)
        if self.bpe is not None:
            tokens = join_pieces(tokens)
        out, opened, hug = "", [], False
        for tok in tokens:
            closes = _closes_quote(tok, opened)
            unspaced = tok and out and _UNSPACED.match(out[-1]) and _UNSPACED.match(tok[0])
            if out and not (hug or closes or tok in _NO_SPACE_BEFORE or out[-1] in _NO_SPACE_AFTER or unspaced):
                out += " "
            out += tok
            hug = tok in _QUOTES and not closes  # an opening quote hugs the word after it
        return out

    def to_dict(self) -> dict:
        """JSON-ready; ``merges`` (the BPE merges, in order) only for a subword tokenizer."""
        out = {"kind": self.kind, "lowercase": self.lowercase, "word_cut": self.word_cut}
        if self.bpe is not None:
            out["merges"] = [list(m) for m in self.bpe.merges]
        return out

    def describe(self) -> dict:
        """Like :meth:`to_dict`, with the number of merges instead of the merges."""
        merges = len(self.bpe.merges) if self.bpe else 0
        return {"kind": self.kind, "lowercase": self.lowercase, "subword_merges": merges}

    @classmethod
    def from_dict(cls, d: dict, vocab: Sequence[str] | None = None) -> Tokenizer:
        """The tokenizer :meth:`to_dict` saved. One saved before tokenizers named their ``word_cut`` cut words
        the current way unless its ``vocab`` holds a token only the older cut gives (:func:`cut_of`)."""
        if not isinstance(d, dict):
            raise CheckpointError(f"a saved tokenizer must be a JSON object {{...}}, got {json.dumps(d)[:40]}")
        missing = [key for key in ("kind", "lowercase") if key not in d]
        if missing:
            raise CheckpointError(f"the saved tokenizer lacks {' and '.join(map(repr, missing))}")
        if not isinstance(d["lowercase"], bool):
            raise CheckpointError(f"the saved tokenizer's 'lowercase' must be true or false, got {d['lowercase']!r}")
        cut = d.get("word_cut")
        if cut is None:
            cut = cut_of(vocab) if vocab is not None and d["kind"] == "word" else UNNAMED_CUT
        if type(cut) is not int or cut not in CUTS:
            raise CheckpointError(f"the saved tokenizer's 'word_cut' must be one of {CUTS}, got {cut!r}")
        merges = d.get("merges")
        pairs = isinstance(merges, list) and all(
            isinstance(m, list) and len(m) == 2 and all(isinstance(x, str) for x in m) for m in merges
        )
        if merges is not None and not pairs:
            raise CheckpointError("the saved tokenizer's 'merges' must be a list of [left, right] string pairs")
        try:
            bpe = BPE(tuple(m) for m in merges) if merges is not None else None
            return cls(kind=d["kind"], lowercase=d["lowercase"], bpe=bpe, word_cut=cut)
        except ConfigError as e:  # an unknown kind
            raise CheckpointError(f"the saved tokenizer: {e}") from e


def cut_of(vocab: Sequence[str]) -> int:
    """The word cut a checkpoint saved before tokenizers named theirs was built with: 1 when one of its
    vocabulary's tokens starts with a combining mark, a zero-width joiner or a skin tone, or is half a
    flag, as only the oldest cut leaves them; else 2, the cut of that time."""
    return 1 if any(_CUT_1_TOKEN.match(token) for token in vocab) else UNNAMED_CUT
