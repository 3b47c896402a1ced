"""Gold word-alignment files: Pharaoh and NAACL/talp, parsed and checked against sentence lengths.

Links are ``(source_index, target_index)``, 0-based, whatever the file uses. Two formats:

* **Pharaoh**, one line per sentence pair: ``i-j`` is a sure link; a possible one is written
  ``i?j`` or, in the other common notation, ``i-j-P`` (``i-j-S`` is sure). One file uses one
  notation: ``?`` and ``-P``/``-S`` together are refused.
* **NAACL** (the 2003 shared task; also the talp/Lambert et al. gold), one line per link:
  ``sent_id i j [S|P] [confidence]``. A missing ``S``/``P`` means sure; the confidence is read
  and ignored. Sentences without a line have no links.

``one_based`` subtracts one from every index (NAACL sentence numbers included); in a 1-based
NAACL file position 0 is the NULL word and its links are dropped. Every problem raises a
:class:`~attnviz.errors.DataError` naming the file and line. Indices and sentence numbers are
ASCII digits, at most six of them; files are read up to :data:`MAX_FILE_BYTES`.
"""

from __future__ import annotations

import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from attnviz.data import Link
from attnviz.errors import DataError
from attnviz.evaluation import AlignmentCounts, alignment_counts

FORMATS = ("pharaoh", "naacl")
MAX_FILE_BYTES = 50 * 2**20  # a sentence or gold file read by path
_PHARAOH_LINK = re.compile(r"^([0-9]{1,6})([-?])([0-9]{1,6})(?:-([SPsp]))?$")
_INDEX = re.compile(r"[0-9]{1,6}")  # an index or sentence number: ASCII digits, bounded
_NUMBER = re.compile(r"^-?[0-9]{1,20}(?:\.[0-9]{1,20})?$")


@dataclass
class GoldAlignment:
    """One sentence pair's gold links; ``possible`` includes ``sure`` (``S ⊆ P``)."""

    sure: set[Link] = field(default_factory=set)
    possible: set[Link] = field(default_factory=set)

    def add(self, link: Link, sure: bool) -> None:
        self.possible.add(link)
        if sure:
            self.sure.add(link)


def _looks_naacl(fields: list[str]) -> bool:
    return 3 <= len(fields) <= 5 and all(_INDEX.fullmatch(f) for f in fields[:3])


def _check_link(link: Link, lengths: list[tuple[int, int]] | None, k: int, where: str, one_based: bool) -> None:
    if lengths is None:
        return
    n_src, n_tgt = lengths[k]
    i, j = link
    if not (0 <= i < n_src and 0 <= j < n_tgt):
        base = 1 if one_based else 0
        raise DataError(
            f"{where}: link {i + base}-{j + base} is outside sentence {k + base} ({n_src} source and {n_tgt} target "
            f"words, {base}-based); check the sentence files and {'drop' if one_based else 'add'} --one-based "
            "if the indices start at the other base"
        )


def parse_pharaoh(
    lines: Iterable[str],
    lengths: list[tuple[int, int]] | None = None,
    one_based: bool = False,
    name: str = "gold file",
) -> list[GoldAlignment]:
    """One :class:`GoldAlignment` per line; ``lengths`` (source, target word counts per sentence)
    checks the line count and every index."""
    lines = list(lines)
    if lengths is not None and len(lines) != len(lengths):
        raise DataError(
            f"{name} line {len(lines) + 1 if len(lines) < len(lengths) else len(lengths) + 1}: the file has "
            f"{len(lines)} lines but there are {len(lengths)} sentence pairs; a Pharaoh file has one line per "
            "pair (an empty line for a pair without links)"
        )
    shift = 1 if one_based else 0
    notation = None  # "?" or "-P": the way this file writes possible links
    gold = []
    for k, line in enumerate(lines):
        where = f"{name} line {k + 1}"
        fields = line.split()
        if fields and _looks_naacl(fields) and not _PHARAOH_LINK.match(fields[0]):
            raise DataError(f"{where}: {line.strip()!r} looks like NAACL (sent_id i j [S|P]); use --format naacl")
        sentence = GoldAlignment()
        for item in fields:
            m = _PHARAOH_LINK.match(item)
            if m is None:
                raise DataError(
                    f"{where}: {item[:40]!r} is not a Pharaoh link; write source-target indices (up to 6 digits "
                    "0-9) such as '0-0 1-2', with '1?2' or '1-2-P' for possible links"
                )
            i, sep, j, tag = m.groups()
            mark = "?" if sep == "?" else "-P" if tag else None
            if mark and notation and mark != notation:
                raise DataError(
                    f"{where}: {item!r} mixes formats: the file marks possible links with {notation!r} earlier; "
                    "use one notation ('i?j' or 'i-j-P') throughout"
                )
            notation = notation or mark
            link = (int(i) - shift, int(j) - shift)
            _check_link(link, lengths, k, where, one_based)
            sentence.add(link, sure=sep == "-" and (tag or "S").upper() == "S")
        gold.append(sentence)
    return gold


def parse_naacl(
    lines: Iterable[str],
    lengths: list[tuple[int, int]],
    one_based: bool = False,
    name: str = "gold file",
) -> list[GoldAlignment]:
    """One :class:`GoldAlignment` per sentence of ``lengths`` from ``sent_id i j [S|P] [confidence]`` lines."""
    shift = 1 if one_based else 0
    gold = [GoldAlignment() for _ in lengths]
    for n, line in enumerate(lines, start=1):
        where = f"{name} line {n}"
        fields = line.split()
        if not fields:
            continue
        if any(_PHARAOH_LINK.match(f) for f in fields):
            raise DataError(f"{where}: {line.strip()!r} mixes formats: it holds Pharaoh links; use --format pharaoh")
        if not 3 <= len(fields) <= 5 or not all(_INDEX.fullmatch(f) for f in fields[:3]):
            raise DataError(
                f"{where}: {line.strip()[:80]!r} is not a NAACL link; write 'sent_id i j [S|P] [confidence]' "
                "with whole-number ids and positions (up to 6 digits 0-9)"
            )
        extra = fields[3:]
        tag = extra.pop(0).upper() if extra and extra[0].upper() in ("S", "P") else "S"
        if len(extra) > 1 or (extra and not _NUMBER.match(extra[0])):
            raise DataError(f"{where}: {' '.join(fields[3:])!r} should be S or P and/or a numeric confidence")
        sent, i, j = (int(f) - shift for f in fields[:3])
        if not 0 <= sent < len(lengths):
            raise DataError(
                f"{where}: sentence {fields[0]} does not exist: the sentence files hold {len(lengths)} pairs, "
                f"numbered from {shift}; check the files or --one-based"
            )
        if one_based and (i < 0 or j < 0):
            continue  # position 0: the NULL word
        _check_link((i, j), lengths, sent, where, one_based)
        gold[sent].add((i, j), sure=tag == "S")
    return gold


def text_lines(data: bytes, name: str) -> list[str]:
    """The lines of ``data`` (UTF-8, a leading byte-order mark dropped), e.g. an uploaded file named ``name``."""
    try:
        return data.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError as e:
        raise DataError(f"{name}: not UTF-8 text ({e.reason} at byte {e.start}); convert it to UTF-8") from None


def _lines(path: str | Path) -> list[str]:
    """The lines of a regular file or pipe of at most :data:`MAX_FILE_BYTES`, read no further."""
    path = Path(path)
    mode = path.stat().st_mode  # a missing file: FileNotFoundError, naming it
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        raise DataError(f"{path} is not a regular file; give a text file with one sentence or gold line per line")
    with path.open("rb") as f:
        data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise DataError(
            f"{path} is over the {MAX_FILE_BYTES // 2**20} MB limit for a sentence or gold file; split it "
            "(e.g. `split -l 100000`) and score the parts"
        )
    return text_lines(data, str(path))


def sentences(lines: Iterable[str]) -> list[list[str]]:
    """Tokenized sentences: one per line, tokens separated by spaces."""
    return [line.split() for line in lines]


def read_sentences(path: str | Path) -> list[list[str]]:
    """A tokenized text file: one sentence per line, tokens separated by spaces."""
    return sentences(_lines(path))


def parse_gold(
    lines: Iterable[str],
    lengths: list[tuple[int, int]],
    fmt: str = "pharaoh",
    one_based: bool = False,
    name: str = "gold file",
) -> list[GoldAlignment]:
    """Gold links of format ``fmt`` (``"pharaoh"`` or ``"naacl"``) for sentences of ``lengths``."""
    if fmt not in FORMATS:
        raise DataError(f"unknown gold format {fmt!r}; choose one of {', '.join(FORMATS)}")
    parse = parse_pharaoh if fmt == "pharaoh" else parse_naacl
    return parse(lines, lengths, one_based, name=name)


def read_gold(
    path: str | Path, lengths: list[tuple[int, int]], fmt: str = "pharaoh", one_based: bool = False
) -> list[GoldAlignment]:
    """Parse a gold file of format ``fmt`` (``"pharaoh"`` or ``"naacl"``) for sentences of ``lengths``."""
    return parse_gold(_lines(path), lengths, fmt, one_based, name=str(path))


def score(
    predicted: Iterable[Iterable[Link]], gold: list[GoldAlignment]
) -> tuple[AlignmentCounts, list[AlignmentCounts]]:
    """Corpus and per-sentence precision/recall/AER counts of predicted links against gold."""
    per_sentence = alignment_counts(predicted, [g.sure for g in gold], [g.possible for g in gold])
    return sum(per_sentence, AlignmentCounts()), per_sentence
