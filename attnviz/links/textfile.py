"""The text side of a gold set: sentence files, or one ``source ||| target`` bitext, read as given words.

Gold sets come pre-tokenized: every space-separated token of a line is a word, and the gold
links count those words. Two layouts:

* two sentence files (``--src``, ``--tgt``), one sentence a line, line by line the same pairs;
* one **bitext** file, ``source sentence ||| target sentence`` a line (fast_align's and
  eflomal's input, the Hansards and RWTH sets as distributed; trailing spaces are fine).

Files are read up to :data:`MAX_FILE_BYTES`, as UTF-8 (a byte-order mark dropped), or as UTF-16 or
UTF-32 after their byte-order mark; every problem raises a :class:`~attnviz.errors.DataError` naming the file and line.
"""

from __future__ import annotations

import codecs
import stat
from collections.abc import Iterable
from pathlib import Path

from attnviz.data import Words, looks_binary
from attnviz.data import text_lines as lines_of
from attnviz.errors import DataError, counted

MAX_FILE_BYTES = 50 * 2**20  # a sentence or gold file read by path
SEPARATOR = "|||"


def text_lines(data: bytes, name: str) -> list[str]:
    """The lines of ``data`` (UTF-8, a leading byte-order mark dropped; UTF-16 or UTF-32 after their
    mark), e.g. an uploaded file named ``name``, cut as every sentence file is
    (:func:`attnviz.data.text_lines`)."""
    if why := looks_binary(data[:8192]):
        raise DataError(f"{name} {why}")
    try:
        return lines_of(data.removeprefix(codecs.BOM_UTF8))
    except UnicodeDecodeError as e:
        wrong = f"not {e.encoding.upper()} text ({e.reason} at byte {e.start})"
        raise DataError(f"{name}: {wrong}; convert it to UTF-8") from None


def file_lines(path: str | Path) -> list[str]:
    """The lines of a regular file or pipe of at most :data:`MAX_FILE_BYTES`, read no further."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise DataError(
            f"no file at {path}; give the path of a text file with one sentence or gold line per line"
        ) from None
    except OSError as e:
        raise DataError(f"cannot read {path}: {e.strerror or e}") from None
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


def sentences(lines: Iterable[str]) -> list[Words]:
    """Tokenized sentences: one per line, tokens separated by spaces."""
    return [line.split() for line in lines]


def is_bitext(lines: list[str]) -> bool:
    """Whether the first line that holds text is a ``source ||| target`` pair."""
    first = next((line for line in lines if line.strip()), "")
    return SEPARATOR in first.split()


def bitext(lines: Iterable[str], name: str = "bitext") -> tuple[list[Words], list[Words]]:
    """The source and target words of ``source ||| target`` lines; a line without exactly one
    ``|||`` is refused naming its number."""
    sources, targets = [], []
    for n, line in enumerate(lines, start=1):
        words = line.split()
        count = words.count(SEPARATOR)
        if count != 1:
            found = "no ' ||| ' separator" if not count else f"{count} ' ||| ' separators"
            raise DataError(
                f"{name} line {n}: {found} in {line.strip()[:60]!r}; a bitext line is 'source words ||| target words'"
            )
        cut = words.index(SEPARATOR)
        sources.append(words[:cut])
        targets.append(words[cut + 1 :])
    return sources, targets


def sentence_pairs(
    source: list[str], target: list[str] | None, names: tuple[str, str | None]
) -> tuple[list[Words], list[Words]]:
    """The given words of each sentence pair: ``target`` ``None`` reads ``source`` as a bitext, else the
    two files line by line. The one reader of the text side for the CLI and the app; ``names`` name
    the files in messages."""
    for name, lines in zip(names, (source, target), strict=True):
        if lines is not None and not any(line.strip() for line in lines):
            raise DataError(f"{name} is empty: it holds no sentences; give at least one pair, one a line")
    if target is None:
        if not is_bitext(source):
            raise DataError(
                f"{names[0]}: its first line has no ' ||| '; give a 'source ||| target' bitext, or the target "
                "sentences too"
            )
        return bitext(source, names[0])
    for name, lines in zip(names, (source, target), strict=True):
        if is_bitext(lines):
            raise DataError(
                f"{name} line 1 holds ' ||| ': a 'source ||| target' bitext; give it alone as the bitext, "
                "without a second sentence file"
            )
    sources, targets = sentences(source), sentences(target)
    if len(sources) != len(targets):
        raise DataError(
            f"{names[0]} has {counted(len(sources), 'line')} but {names[1]} has {len(targets)}; give files with "
            "one sentence of the same pair per line"
        )
    return sources, targets


def read_pairs(source: str | Path, target: str | Path | None = None) -> tuple[list[Words], list[Words]]:
    """:func:`sentence_pairs` of files: a bitext alone, or a source and a target file."""
    lines = file_lines(source)
    other = file_lines(target) if target is not None else None
    return sentence_pairs(lines, other, (str(source), str(target) if target is not None else None))


def check_pairs(sources: list[Words], targets: list[Words], names: tuple[str, str]) -> None:
    """Refuse a text without pairs, and an empty sentence (no gold link can hold it), naming its line."""
    if not sources:
        raise DataError(f"{names[0]} holds no sentence pairs; give at least one, one pair a line")
    for name, which, side in zip(names, ("source", "target"), (sources, targets), strict=True):
        empty = next((k for k, words in enumerate(side, start=1) if not words), None)
        if empty is not None:
            raise DataError(
                f"{name} line {empty}: an empty {which} sentence; remove the pair from the text and the gold file"
            )
