"""Seeded generators of the built-in tasks, each pair with its gold alignment.

- ``dates``: dates written by people ("Saturday 22nd of November 2026", "22.11.26",
  "le 22 novembre 2026", ...) to ISO ``2026-11-22``, character by character. Digits copied
  from the source are *sure* links; characters of a word that names a value ("november",
  "twenty-second") and digits that only imply a padding zero or a century are *possible*.
  The ISO hyphens are left unaligned.
- ``copy``, ``reverse``, ``sort``: short sequences of symbols separated by spaces (diagonal,
  anti-diagonal and permutation alignments). In ``sort`` a symbol that occurs twice may have
  come from either occurrence: the stable choice is sure, the others possible.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable

from attnviz.data.pairs import Link, Pair, make_pair
from attnviz.data.tokenize import Tokenizer

CHAR = Tokenizer("char", lowercase=True)
WORD = Tokenizer("word", lowercase=True)
SYMBOLS = tuple("abcdefghij")

MONTHS = {
    "en": "january february march april may june july august september october november december",
    "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "de": "januar februar märz april mai juni juli august september oktober november dezember",
}
WEEKDAYS = {
    "en": "monday tuesday wednesday thursday friday saturday sunday",
    "fr": "lundi mardi mercredi jeudi vendredi samedi dimanche",
    "de": "montag dienstag mittwoch donnerstag freitag samstag sonntag",
}
_ORDINALS = [
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
    "twentieth",
]
_TENS = {20: "twenty", 30: "thirty"}


class _Source:
    """Builds a source string piece by piece, remembering where each piece landed."""

    def __init__(self, case: str):
        self.text = ""
        self.case = case

    def add(self, piece: str) -> list[int]:
        if self.case == "upper":
            piece = piece.upper()
        elif self.case == "title" and piece[:1].isalpha():
            piece = piece[:1].upper() + piece[1:]
        start = len(self.text)
        self.text += piece
        return list(range(start, len(self.text)))


def _ordinal_suffix(day: int) -> str:
    if day in (11, 12, 13):
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


class _Links:
    """Gold links of one date; output positions: year 0-3, month 5-6, day 8-9."""

    def __init__(self) -> None:
        self.sure: set[Link] = set()
        self.possible: set[Link] = set()

    def digits(self, span: list[int], out: tuple[int, int]) -> None:
        """A one- or two-digit number padded to two output digits."""
        if len(span) == 2:
            self.sure |= {(span[0], out[0]), (span[1], out[1])}
        else:
            self.sure.add((span[0], out[1]))
            self.possible.add((span[0], out[0]))  # the zero is implied by the digit's being alone

    def word(self, span: list[int], outs: tuple[int, ...]) -> None:
        self.possible |= {(i, o) for i in span for o in outs}

    def year(self, span: list[int]) -> None:
        if len(span) == 4:
            self.sure |= {(i, k) for k, i in enumerate(span)}
        else:
            self.sure |= {(span[0], 2), (span[1], 3)}
            self.possible |= {(i, k) for i in span for k in (0, 1)}  # the century is inferred


def _date_pair(date: dt.date, rng: random.Random) -> Pair:
    lang = rng.choices(("en", "fr", "de"), weights=(6, 2, 2))[0]
    src = _Source(rng.choice(("lower", "lower", "title", "upper")))
    links = _Links()
    y, m, d = date.year, date.month, date.day
    month = MONTHS[lang].split()[m - 1]
    weekday = WEEKDAYS[lang].split()[date.weekday()]
    abbreviate = rng.random() < 0.4

    def day_num(pad: bool) -> None:
        links.digits(src.add(f"{d:02d}" if pad else str(d)), (8, 9))

    def month_num(pad: bool) -> None:
        links.digits(src.add(f"{m:02d}" if pad else str(m)), (5, 6))

    def month_word() -> None:
        links.word(src.add(month[:3] if abbreviate and len(month) > 4 else month), (5, 6))

    def year(short: bool = False) -> None:
        links.year(src.add(f"{y % 100:02d}" if short else str(y)))

    def day_word() -> None:
        if d <= 20 or d in _TENS:
            links.word(src.add(_ORDINALS[d - 1] if d <= 20 else _TENS[d][:-1] + "ieth"), (8, 9))
        else:
            links.word(src.add(_TENS[d - d % 10]), (8,))
            src.add("-")
            links.word(src.add(_ORDINALS[d % 10 - 1]), (9,))

    fmt = rng.randrange(8) if lang == "en" else rng.randrange(4)
    if lang == "en" and fmt == 0:  # saturday 22nd of november 2026
        src.add(weekday[:3] + ", " if abbreviate else weekday + " ")
        day_num(False)
        src.add(_ordinal_suffix(d) + " of ")
        month_word(), src.add(" "), year()
    elif lang == "en" and fmt == 1:  # nov 22, 2026
        month_word(), src.add(" "), day_num(False), src.add(", "), year()
    elif lang == "en" and fmt == 2:  # 11/22/2026
        month_num(True), src.add("/"), day_num(True), src.add("/"), year(rng.random() < 0.3)
    elif lang == "en" and fmt == 3:  # the twenty-second of november 2026
        src.add("the "), day_word(), src.add(" of "), month_word(), src.add(" "), year()
    elif lang == "en" and fmt == 4:  # november 22nd, 2026
        month_word(), src.add(" "), day_num(False), src.add(_ordinal_suffix(d) + ", "), year()
    elif lang == "en" and fmt == 5:  # 2026-11-22 or 20261122
        sep = rng.choice(("-", ""))
        year(), src.add(sep), month_num(True), src.add(sep), day_num(True)
    elif lang == "en" and fmt == 6:  # 22 nov 2026
        day_num(rng.random() < 0.5), src.add(" "), month_word(), src.add(" "), year()
    elif fmt == 0:  # 22.11.26 (day first, the European way)
        day_num(True), src.add("."), month_num(True), src.add("."), year(rng.random() < 0.5)
    elif lang == "fr":  # samedi 22 novembre 2026 / le 22 nov. 2026
        src.add(weekday + " " if fmt == 1 else "le ")
        day_num(False), src.add(" "), month_word(), src.add(" "), year()
    elif lang == "de":  # Samstag, 22. November 2026
        if fmt == 1:
            src.add(weekday + ", ")
        day_num(False), src.add(". "), month_word(), src.add(" "), year()
    else:  # 22 november 2026 (en, fmt 7)
        day_num(False), src.add(" "), month_word(), src.add(" "), year()
    return make_pair(src.text, date.isoformat(), CHAR, CHAR, links.sure, links.possible)


def dates(n: int, seed: int = 0) -> list[Pair]:
    """``n`` dates between 1950 and 2049 in many written forms, to ISO ``YYYY-MM-DD``."""
    rng = random.Random(seed)
    first, span = dt.date(1950, 1, 1).toordinal(), 100 * 365 + 24
    return [_date_pair(dt.date.fromordinal(first + rng.randrange(span)), rng) for _ in range(n)]


def _symbols(rng: random.Random, min_len: int, max_len: int) -> list[str]:
    return [rng.choice(SYMBOLS) for _ in range(rng.randint(min_len, max_len))]


def _symbol_pairs(
    n: int,
    seed: int,
    min_len: int,
    max_len: int,
    order: Callable[[list[str]], list[int]],
    ties: bool = False,
) -> list[Pair]:
    """``order(symbols)`` gives, for each output position, the source index it copies.

    With ``ties``, any source occurrence of the output symbol is a possible link.
    """
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        source = _symbols(rng, min_len, max_len)
        picks = order(source)
        output = [source[i] for i in picks]
        sure = [(i, j) for j, i in enumerate(picks)]
        possible = [(i, j) for j, sym in enumerate(output) for i, s in enumerate(source) if s == sym]
        possible = possible if ties else sure
        pairs.append(make_pair(" ".join(source), " ".join(output), WORD, WORD, sure, possible))
    return pairs


def copy(n: int, seed: int = 0, min_len: int = 3, max_len: int = 10) -> list[Pair]:
    """Copy a symbol sequence (diagonal alignment)."""
    return _symbol_pairs(n, seed, min_len, max_len, lambda s: list(range(len(s))))


def reverse(n: int, seed: int = 0, min_len: int = 3, max_len: int = 10) -> list[Pair]:
    """Reverse a symbol sequence (anti-diagonal alignment)."""
    return _symbol_pairs(n, seed, min_len, max_len, lambda s: list(range(len(s)))[::-1])


def sort(n: int, seed: int = 0, min_len: int = 3, max_len: int = 10) -> list[Pair]:
    """Sort a symbol sequence alphabetically (a permutation; stable for repeated symbols)."""

    def stable_order(s: list[str]) -> list[int]:
        return sorted(range(len(s)), key=lambda i: s[i])

    return _symbol_pairs(n, seed, min_len, max_len, stable_order, ties=True)
