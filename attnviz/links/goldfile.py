"""Gold word-alignment files as the field distributes them, parsed and checked against the sentences.

Links are ``(source_index, target_index)``, 0-based, whatever the file uses. Three formats:

* **pharaoh**, one line per sentence pair: ``i-j`` is a sure link; a possible one is written
  ``i?j`` or ``i-j-P`` (``i-j-S`` is sure). One file uses one notation.
* **talp**, the same layout with a possible link written ``ipj`` (the Hansards en-fr and RWTH
  sets as distributed, 1-based).
* **naacl** (the 2003 shared task), one line per link: ``sent_id i j [S|P] [confidence]``. A
  missing ``S``/``P`` means sure; the confidence is read and ignored. In a 1-based file position 0
  is the NULL word and its links are dropped.

:func:`detect_format` is the one answer to "which format is this file": the CLI and the app use it
through :func:`parse_gold`. The index base is given (0 or 1) or detected: each base is tried
against the sentence lengths, and a base that puts a link outside its sentence is ruled out
(an index equal to the sentence's length is 1-based; an index 0 is 0-based). When both fit, the
format's usual base is taken (0 for pharaoh, 1 for talp and naacl) with a warning; a given base
the indices look wrong for (no index 0 at all, yet all fit 1-based) is kept with a warning.

Every problem raises a :class:`~attnviz.errors.DataError` naming the file and line. Indices and
sentence numbers are ASCII digits, at most six of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from attnviz.data import Link
from attnviz.errors import DataError, counted
from attnviz.evaluation import AlignmentCounts, alignment_counts
from attnviz.links.textfile import SEPARATOR, file_lines

FORMATS = ("pharaoh", "talp", "naacl")
BASES = (0, 1)
USUAL_BASE = {"pharaoh": 0, "talp": 1, "naacl": 1}
NOTATIONS = {
    "pharaoh": "one line a pair, i-j sure, i?j or i-j-P possible",
    "talp": "one line a pair, i-j sure, ipj possible",
    "naacl": "one link a line, sent_id i j [S|P]",
}
_LINK = re.compile(r"^([0-9]{1,6})([-?pP])([0-9]{1,6})(?:-([SPsp]))?$")
_INDEX = re.compile(r"[0-9]{1,6}")  # an index or sentence number: ASCII digits, bounded
_NUMBER = re.compile(r"^-?[0-9]{1,20}(?:\.[0-9]{1,20})?$")
_TITLE = {"pharaoh": "Pharaoh", "talp": "talp", "naacl": "NAACL"}
_POSSIBLE = {"pharaoh": "'1?2' or '1-2-P'", "talp": "'1p2'"}
_FORMAT_OF_MARK = {"?": "pharaoh", "-P": "pharaoh", "p": "talp"}
_SAME_WITHOUT_POSSIBLE = ("pharaoh", "talp")  # they differ only in how a possible link is written


@dataclass
class GoldAlignment:
    """One sentence pair's gold links; ``possible`` includes ``sure`` (``S ⊆ P``)."""

    sure: set[Link] = field(default_factory=set)
    possible: set[Link] = field(default_factory=set)

    def add(self, link: Link, sure: bool) -> None:
        self.possible.add(link)
        if sure:
            self.sure.add(link)


@dataclass
class GoldFile:
    """A gold file's links per sentence pair, with the convention it was read in."""

    alignments: list[GoldAlignment]
    format: str  # one of FORMATS
    base: int  # 0 or 1: what the file's first word is numbered
    how: str  # how the base was chosen: "given", "detected: ..." or "assumed: ..."
    warnings: list[str] = field(default_factory=list)
    null_links: int = 0  # links to the NULL word (position 0 of a 1-based naacl file), dropped

    def __repr__(self) -> str:  # a line a notebook can show: the links of every pair are read as an attribute
        sure = sum(len(a.sure) for a in self.alignments)
        possible = sum(len(a.possible - a.sure) for a in self.alignments)
        return f"GoldFile({len(self.alignments)} pairs, {sure} sure and {possible} possible-only links, {self.format})"

    def convention(self) -> str:
        """One line for the CLI and the app, e.g. ``talp (one line a pair, i-j sure, ipj possible), 1-based
        (detected: ...)``."""
        null = f"; {self.null_links} links to the NULL word dropped" if self.null_links else ""
        written = f"{self.format} ({NOTATIONS[self.format]})"
        if self.format in _SAME_WITHOUT_POSSIBLE and not self.has_possible():
            other = next(f for f in _SAME_WITHOUT_POSSIBLE if f != self.format)
            written = f"{self.format} or {other} (one line a pair, i-j sure; no possible link, so the two coincide)"
        return f"{written}, {self.base}-based ({self.how}){null}"

    def has_possible(self) -> bool:
        """Whether any link is possible only (not sure)."""
        return any(a.possible - a.sure for a in self.alignments)


@dataclass(slots=True)
class _Raw:
    """A link as written: its sentence (the line's position, or the naacl number as written), indices as written.
    One a link of the file, all held until the base is chosen: slots, not a dict each (a third of the size)."""

    line: int
    sentence: int
    i: int
    j: int
    sure: bool


def _kind(fields: list[str]) -> str | None:
    """What a line's fields look like: ``"naacl"``, a link notation (``"-"``, ``"?"``, ``"-P"``, ``"p"``), or None."""
    if 3 <= len(fields) <= 5 and all(_INDEX.fullmatch(f) for f in fields[:3]):
        return "naacl"
    marks = set()
    for item in fields:
        m = _LINK.match(item)
        if m is None:
            return None
        sep, tag = m.group(2), m.group(4)
        marks.add("p" if sep in "pP" else "?" if sep == "?" else "-P" if tag and tag.upper() == "P" else "-")
    possible = marks - {"-"}
    return possible.pop() if len(possible) == 1 else "-" if not possible else "mixed"


def detect_format(lines: Iterable[str], name: str = "gold file") -> str:
    """The format of a gold file, from its lines: ``naacl`` (digits in three columns), ``talp`` (``ipj``
    possible links) or ``pharaoh`` (``i?j`` or ``i-j-P``, or sure links only). A line of no format, or
    a file that mixes them, raises :class:`DataError` naming the line."""
    found: tuple[str, int] | None = None  # (notation of possible links, line) of the first line with one
    layout: tuple[str, int] | None = None  # ("naacl" or "pairs", line)
    for n, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields:
            continue
        where = f"{name} line {n}"
        if SEPARATOR in fields:
            raise DataError(f"{where}: a 'source ||| target' sentence line; give it as the text, not as the gold file")
        kind = _kind(fields)
        if kind is None or kind == "mixed":
            bad = next((f for f in fields if not _LINK.match(f)), fields[0]) if kind is None else line.strip()
            what = "is not a gold link" if kind is None else "mixes possible-link notations"
            raise DataError(
                f"{where}: {bad[:40]!r} {what}; write Pharaoh 'i-j' (possible 'i?j' or 'i-j-P'), talp 'i-j' "
                "(possible 'ipj') or NAACL 'sent_id i j [S|P]', indices of up to 6 digits 0-9"
            )
        this = "naacl" if kind == "naacl" else "pairs"
        if layout and layout[0] != this:
            raise DataError(
                f"{where}: {line.strip()[:40]!r} mixes formats: line {layout[1]} is "
                f"{'NAACL (one link a line)' if layout[0] == 'naacl' else 'one line of links a pair'}"
            )
        layout = layout or (this, n)
        if kind in _FORMAT_OF_MARK:
            if found and kind != found[0]:
                raise DataError(
                    f"{where}: {line.strip()[:40]!r} mixes notations: line {found[1]} marks possible links with "
                    f"{found[0]!r}; use one notation ('i?j', 'i-j-P' or 'ipj') throughout"
                )
            found = found or (kind, n)
    if layout and layout[0] == "naacl":
        return "naacl"
    return _FORMAT_OF_MARK[found[0]] if found else "pharaoh"


def _pair_links(lines: list[str], lengths: list[tuple[int, int]], fmt: str, name: str) -> list[_Raw]:
    """The links of a one-line-a-pair file (pharaoh or talp) as written; the line count is checked."""
    if len(lines) != len(lengths):
        raise DataError(
            f"{name} line {min(len(lines), len(lengths)) + 1}: the file has {counted(len(lines), 'line')} but "
            f"there {'is' if len(lengths) == 1 else 'are'} {counted(len(lengths), 'sentence pair')}; a {fmt} file "
            "has one line per pair (an empty line for a pair without links)"
        )
    raw, notation = [], None  # notation: "?", "-P" or "p", the way this file marks possible links
    for k, line in enumerate(lines):
        fields = line.split()
        number = k + 1  # one number shared by the line's links
        where = f"{name} line {number}"
        if _kind(fields) == "naacl":
            raise DataError(
                f"{where}: {line.strip()!r} looks like NAACL (sent_id i j [S|P]); read it as NAACL (format naacl)"
            )
        for item in fields:
            m = _LINK.match(item)
            sep, tag = (m.group(2), m.group(4)) if m else ("", None)
            mark = "p" if sep in ("p", "P") else "?" if sep == "?" else "-P" if (tag or "S").upper() == "P" else None
            if m is None or (mark and _FORMAT_OF_MARK[mark] != fmt) or (fmt == "talp" and tag):
                hint = (
                    f"; read it as {_FORMAT_OF_MARK[mark]} (format {_FORMAT_OF_MARK[mark]}) or auto-detect"
                    if m and mark
                    else ""
                )
                raise DataError(
                    f"{where}: {item[:40]!r} is not a {_TITLE[fmt]} link; write source-target indices (up to 6 "
                    f"digits 0-9) such as '0-0 1-2', with {_POSSIBLE[fmt]} for a possible link{hint}"
                )
            if mark and notation and mark != notation:
                raise DataError(
                    f"{where}: {item!r} mixes notations: the file marks possible links with {notation!r} earlier; "
                    "use one notation throughout"
                )
            notation = notation or mark
            raw.append(_Raw(number, k, int(m.group(1)), int(m.group(3)), sep == "-" and (tag or "S").upper() == "S"))
    return raw


def _naacl_links(lines: list[str], name: str) -> list[_Raw]:
    """The links of a NAACL file as written (sentence numbers as written too)."""
    raw = []
    for n, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields:
            continue
        if any(_LINK.match(f) for f in fields):
            raise DataError(
                f"{name} line {n}: {line.strip()[:40]!r} mixes formats: it holds Pharaoh links; "
                "read it as Pharaoh (format pharaoh)"
            )
        if _kind(fields) != "naacl":
            raise DataError(
                f"{name} line {n}: {line.strip()[:80]!r} is not a NAACL link; write 'sent_id i j [S|P] [confidence]' "
                "with whole-number ids and positions (up to 6 digits 0-9)"
            )
        extra = fields[3:]
        tag = extra.pop(0).upper() if extra and extra[0].upper() in ("S", "P") else "S"
        if len(extra) > 1 or (extra and not _NUMBER.match(extra[0])):
            raise DataError(f"{name} line {n}: {' '.join(fields[3:])!r} should be S or P and/or a numeric confidence")
        sent, i, j = (int(f) for f in fields[:3])
        raw.append(_Raw(n, sent, i, j, tag == "S"))
    return raw


def _misfit(raw: list[_Raw], lengths: list[tuple[int, int]], fmt: str, base: int) -> tuple[_Raw, str] | None:
    """The first link that does not fit ``base`` (and why), or None when all do."""
    for r in raw:
        k = r.sentence - base if fmt == "naacl" else r.sentence
        if not 0 <= k < len(lengths):
            return r, f"sentence {r.sentence} does not exist: the text holds {len(lengths)} pairs, numbered from {base}"
        if fmt == "naacl" and base == 1 and (r.i == 0 or r.j == 0):
            continue  # the NULL word
        n_src, n_tgt = lengths[k]
        if base <= r.i < n_src + base and base <= r.j < n_tgt + base:
            continue
        words = f"{n_src} source and {n_tgt} target words"
        if base == 1 and (r.i == 0 or r.j == 0):
            return r, f"link {r.i}-{r.j} has an index 0, and 1-based numbering starts at 1"
        if base == 0 and (r.i == n_src or r.j == n_tgt):
            return r, f"link {r.i}-{r.j} has an index equal to its sentence's length ({words})"
        return r, f"link {r.i}-{r.j} is outside its sentence ({words}, {base}-based)"
    return None


def _choose_base(
    raw: list[_Raw], lengths: list[tuple[int, int]], fmt: str, base: int | str, name: str
) -> tuple[int, str, list[str]]:
    """``(base, how, warnings)``: the given base checked, or the one the indices fit."""
    misfits = {b: _misfit(raw, lengths, fmt, b) for b in BASES}
    if base != "auto":
        if base not in BASES:
            raise DataError(f"the index base is 0, 1 or auto, got {base!r}")
        base = int(base)  # True/False from a one-based flag
        bad = misfits[base]
        if bad is not None:
            other = 1 - base
            hint = (
                f"the indices fit {other}-based: read it {other}-based (index base {other}) or auto-detect"
                if misfits[other] is None
                else "check that the text and the gold file hold the same pairs"
            )
            raise DataError(f"{name} line {bad[0].line}: {bad[1]}; {hint}")
        warnings = []
        if misfits[1 - base] is None and raw and _looks_other(raw, fmt, base):
            warnings.append(_looks_other(raw, fmt, base))
        return base, "given", warnings
    fits = [b for b in BASES if misfits[b] is None]
    if not fits:
        (r0, why0), (r1, why1) = misfits[0], misfits[1]
        raise DataError(
            f"{name}: the indices fit neither base: 0-based, line {r0.line}: {why0}; 1-based, line {r1.line}: "
            f"{why1}. Check that the text and the gold file hold the same pairs"
        )
    if len(fits) == 1:
        chosen = fits[0]
        bad = misfits[1 - chosen]
        return chosen, f"detected: {1 - chosen}-based is ruled out, line {bad[0].line}: {bad[1]}", []
    usual = USUAL_BASE[fmt]
    if not raw:
        return usual, f"assumed: no links, {fmt}'s usual base", []
    return (
        usual,
        f"assumed: {fmt}'s usual base",
        [
            f"{name}: every index fits both 0- and 1-based numbering; read as {usual}-based, {fmt}'s usual base. "
            f"Choose index base {1 - usual} if the file's first word is {1 - usual}"
        ],
    )


def _looks_other(raw: list[_Raw], fmt: str, base: int) -> str:
    """A warning when the indices, read as ``base``, look like the other base; empty when not."""
    if base == 0 and not any(r.i == 0 or r.j == 0 or (fmt == "naacl" and r.sentence == 0) for r in raw):
        return "no index is 0, and every link fits 1-based numbering: is the file 1-based (index base 1)?"
    if base == 1 and fmt == "naacl" and any(r.sentence == 0 for r in raw):
        return "a sentence is numbered 0: is the file 0-based (index base 0)?"
    return ""


def parse_gold(
    lines: Iterable[str],
    lengths: list[tuple[int, int]],
    fmt: str = "auto",
    base: int | str = "auto",
    name: str = "gold file",
) -> GoldFile:
    """The gold links of ``lines`` for sentence pairs of ``lengths`` (source, target word counts).

    ``fmt`` is one of :data:`FORMATS` or ``"auto"`` (:func:`detect_format`); ``base`` is 0, 1 or
    ``"auto"`` (module docstring). Every problem raises :class:`DataError` naming ``name`` and the line.
    """
    lines = list(lines)
    if fmt == "auto":
        fmt = detect_format(lines, name)
    elif fmt not in FORMATS:
        raise DataError(f"unknown gold format {fmt!r}; choose one of auto, {', '.join(FORMATS)}")
    raw = _naacl_links(lines, name) if fmt == "naacl" else _pair_links(lines, lengths, fmt, name)
    chosen, how, warnings = _choose_base(raw, lengths, fmt, base, name)
    gold = [GoldAlignment() for _ in lengths]
    null = 0
    for r in raw:
        k = r.sentence - chosen if fmt == "naacl" else r.sentence
        if fmt == "naacl" and chosen == 1 and (r.i == 0 or r.j == 0):
            null += 1
            continue
        gold[k].add((r.i - chosen, r.j - chosen), r.sure)
    return GoldFile(gold, fmt, chosen, how, [w if w.startswith(name) else f"{name}: {w}" for w in warnings], null)


def read_gold(
    path: str | Path, lengths: list[tuple[int, int]], fmt: str = "auto", base: int | str = "auto"
) -> GoldFile:
    """:func:`parse_gold` of a file, read up to the size limit of :mod:`attnviz.links.textfile`."""
    return parse_gold(file_lines(path), lengths, fmt, base, name=str(path))


def parse_pharaoh(
    lines: Iterable[str],
    lengths: list[tuple[int, int]] | None = None,
    one_based: bool = False,
    name: str = "gold file",
) -> list[GoldAlignment]:
    """One :class:`GoldAlignment` per line of a Pharaoh or talp file, of the given base; ``lengths``
    (source, target word counts per pair) checks the line count and every index, ``None`` neither."""
    lines = list(lines)
    talp = any(m and m.group(2) in "pP" for line in lines for m in map(_LINK.match, line.split()))
    fmt = "talp" if talp else "pharaoh"
    unchecked = 10**6 + 1  # past any 6-digit index
    lengths = [(unchecked, unchecked)] * len(lines) if lengths is None else lengths
    return parse_gold(lines, lengths, fmt, int(one_based), name).alignments


def score_links(
    predicted: Iterable[Iterable[Link] | None], gold: list[GoldAlignment] | GoldFile
) -> tuple[AlignmentCounts, list[AlignmentCounts | None]]:
    """Corpus and per-sentence counts of predicted links against gold (``gold`` a :class:`GoldFile`
    or its ``alignments``), whose properties are the precision, recall and AER; a pair predicted
    ``None`` (skipped: the model could not read it) is left out of both, ``None`` per sentence."""
    predicted = list(predicted)
    gold = gold.alignments if isinstance(gold, GoldFile) else gold
    if len(predicted) != len(gold):
        raise DataError(f"{len(predicted)} predicted alignments but {len(gold)} gold ones; give one per pair")
    kept = [k for k, links in enumerate(predicted) if links is not None]
    counts = alignment_counts(
        [predicted[k] for k in kept], [gold[k].sure for k in kept], [gold[k].possible for k in kept]
    )
    per_sentence: list[AlignmentCounts | None] = [None] * len(predicted)
    for k, c in zip(kept, counts, strict=True):
        per_sentence[k] = c
    return sum(counts, AlignmentCounts()), per_sentence
