"""What every real-corpus loader shares: the ``datasets`` cache, safe file checks, reading two text
columns of records, dropping pairs with an empty side.

The loaders (:mod:`attnviz.data.multi30k`, :mod:`attnviz.data.tables`, :mod:`attnviz.data.hub`)
each return raw ``(source, target)`` text pairs per split plus notes on anything they dropped;
``spec.load_corpus`` tokenizes, filters and splits them. Every problem with the input is a
``DataError`` naming the file, the line and what to do. Tables and Hub datasets are read through
``datasets``, whose Arrow copies go to ``CACHE_DIR``; it is read where it is used
(``corpora.CACHE_DIR``), so setting it here moves both loaders' cache. Multi30k's plain text files
are read directly (their tokens are cached by :mod:`attnviz.data.token_cache`).
"""

from __future__ import annotations

import contextlib
import gzip
import os
import shutil
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from attnviz.data.scratch import user_temp
from attnviz.data.textcodec import bom_encoding
from attnviz.errors import DataError

if TYPE_CHECKING:
    from datasets import Dataset

RawPairs = list[tuple[str, str]]
DEFAULT_MAX_BYTES = 256 * 2**20
CHUNK_BYTES = 4 * 2**20  # what check_file and the streamed summary read at a time
MAX_SHOWN_COLUMNS = 20  # column names a message lists
CACHE_DIR = Path(os.environ.get("ATTNVIZ_DATASETS_CACHE") or user_temp("attnviz-datasets"))
SCRATCH_PREFIX = "scratch-"  # a table's Arrow copy lives in CACHE_DIR/scratch-* only while it is read
TABLE_BUILDERS = ("csv", "json", "parquet")  # the datasets builders of local tables


@contextlib.contextmanager
def quiet_datasets() -> Iterator[object]:
    """Import ``datasets`` with its progress bars off (they would garble CLI output)."""
    import datasets

    was_disabled = datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        yield datasets
    finally:
        if not was_disabled:
            datasets.enable_progress_bars()


def load_files(builder: str, files: dict[str, str], cache_dir: str | None = None, **kwargs) -> dict[str, list[dict]]:
    """``datasets.load_dataset`` on local files (its Arrow copy in ``cache_dir``, default
    ``CACHE_DIR``), any failure turned into a DataError."""
    with quiet_datasets() as datasets:
        try:
            loaded = datasets.load_dataset(builder, data_files=files, cache_dir=cache_dir or str(CACHE_DIR), **kwargs)
        except Exception as e:  # datasets wraps parser errors in its own exception types
            cause = e.__cause__ or e
            detail = " ".join(str(cause).split()) or type(cause).__name__  # parser messages may end in "\n"
            raise DataError(
                f"could not read {', '.join(files.values())} as {builder}: {detail}. "
                "Check that the file is well-formed (one record per line for JSON Lines)."
            ) from e
    return {split: loaded[split] for split in files}


def check_file(path: Path, max_bytes: int = DEFAULT_MAX_BYTES, text: bool = True, keep: bool = True) -> bytes | None:
    """Refuse a missing or over-large file, or (``text``) one whose bytes are not UTF-8. The
    file is read in chunks of ``CHUNK_BYTES``; its bytes are returned when ``keep`` (else None, and
    the check holds one chunk in memory at a time)."""
    if not path.is_file():
        raise DataError(f"{path} does not exist or is not a file; check the path.")
    size = path.stat().st_size
    if size > max_bytes:
        raise DataError(
            f"{path} is {size / 2**20:.0f} MB, above the limit of {max_bytes / 2**20:.0f} MB; "
            "load a sample of it (e.g. `head -n 100000`) or raise max_bytes."
        )
    if not text:
        return None
    kept: list[bytes] = []
    total = lines = line_start = 0  # bytes, newlines and the offset of the last line's start before ``carry``
    carry = b""  # a character cut by a chunk's end
    try:
        with gzip.open(path) if path.suffix == ".gz" else open(path, "rb") as f:
            while chunk := f.read(CHUNK_BYTES):
                if total + len(carry) + len(chunk) > max_bytes:
                    raise DataError(
                        f"{path} holds more than {max_bytes / 2**20:.0f} MB of text once decompressed; "
                        "load a sample of it or raise max_bytes."
                    )
                if not total and bom_encoding(chunk) != "utf-8-sig":
                    wide = bom_encoding(chunk).upper()
                    raise DataError(
                        f'{path} is {wide} text (it starts with a {wide} byte-order mark, as Excel\'s "Unicode Text" '
                        f'and Notepad\'s "Unicode" write); re-save it as UTF-8 (`iconv -f {wide} -t UTF-8 in > out`).'
                    )
                if keep:
                    kept.append(chunk)
                data, carry = carry + chunk, b""
                try:
                    data.decode("utf-8")
                except UnicodeDecodeError as e:
                    if e.reason != "unexpected end of data" or len(data) - e.start > 3:
                        _not_utf8(path, data, e.start, lines, line_start - total)
                    data, carry = data[: e.start], data[e.start :]
                if b"\n" in data:
                    line_start = total + data.rfind(b"\n") + 1
                total, lines = total + len(data), lines + data.count(b"\n")
    except (gzip.BadGzipFile, EOFError, zlib.error) as e:  # only gzip.open raises these
        raise DataError(f"{path} is not a readable gzip file ({e}); decompress it or fetch it again.") from e
    except OSError as e:  # no permission, a disk error
        raise DataError(f"cannot read {path}: {e.strerror or e}; check that you may read it, or copy it.") from e
    if carry:
        _not_utf8(path, carry, 0, lines, line_start - total)
    return b"".join(kept) if keep else None


def _not_utf8(path: Path, data: bytes, at: int, lines_before: int, line_start: int) -> None:
    """Refuse byte ``at`` of ``data``; ``line_start``: where the line open before ``data`` began (<= 0)."""
    line = lines_before + data.count(b"\n", 0, at) + 1
    start = data.rfind(b"\n", 0, at) + 1 or line_start
    raise DataError(
        f"{path}, line {line}, column {at - start + 1}: byte {data[at]:#04x} is not UTF-8; re-save the "
        "file as UTF-8 (e.g. `iconv -f latin1 -t utf-8 in > out`)."
    )


def drop_empty_rows(rows: RawPairs, where: str, first_line: int, empty: str, notes: list[str]) -> RawPairs:
    """Drop (and note) or refuse pairs with an empty side; ``first_line`` numbers the first row."""
    bad = [i for i, (s, t) in enumerate(rows) if not s.strip() or not t.strip()]
    if not bad:
        return rows
    empty_rows(where, [i + first_line for i in bad[:5]], len(bad), len(rows), empty, notes)
    drop = set(bad)
    return [r for i, r in enumerate(rows) if i not in drop]


def empty_rows(where: str, first_lines: list[int], n_empty: int, n_rows: int, empty: str, notes: list[str]) -> None:
    """Note ``n_empty`` rows with an empty side out of ``n_rows`` (the first at ``first_lines``), or
    refuse them (``empty="error"``, or every row empty)."""
    lines = ", ".join(str(n) for n in first_lines[:5]) + (", ..." if n_empty > 5 else "")
    if empty == "error" or n_empty == n_rows:
        raise DataError(
            f"{where}: {n_empty} of {n_rows} rows have an empty source or target (line {lines}); "
            "fill or delete them, or load with empty='drop' to skip them."
        )
    rows = "row" if n_empty == 1 else "rows"
    notes.append(f"{where}: dropped {n_empty} {rows} with an empty side (line {lines})")


def no_rows(path: Path | str, n_rows: int) -> None:
    """Refuse a table without rows."""
    if not n_rows:
        raise DataError(f"{path} holds no rows; add some or pick another file.")


MAX_COLUMNS = 1000  # a pair table needs two text columns; a wider header costs minutes to read


def check_width(path: Path, columns: int) -> None:
    """Refuse a table of more than ``MAX_COLUMNS`` columns (nested fields counted) before it is read."""
    if columns > MAX_COLUMNS:
        raise DataError(
            f"{path} has {columns:,} columns, more than a table of sentence pairs may have here "
            f"({MAX_COLUMNS:,}); keep the two text columns you want (and a few others) in a file of their own "
            "and give that."
        )


def json_width(path: Path, data: bytes) -> None:
    """Refuse JSON records that name more than ``MAX_COLUMNS`` fields in all (nested ones as ``a.b``)
    or nest too deeply to read, before ``datasets`` reads them; a file that is not JSON passes (its
    reader says what is wrong)."""
    import json

    names: set[str] = set()

    def walk(record: object, prefix: str) -> None:
        stack = [(record, prefix)]  # without recursion: a record may nest as deep as json reads
        while stack:
            node, at = stack.pop()
            if isinstance(node, dict):
                for key, value in node.items():
                    names.add(at + str(key))
                    stack.append((value, f"{at}{key}."))

    def parsed(text: bytes) -> object:
        try:
            return json.loads(text)
        except RecursionError:
            raise DataError(
                f"{path} nests its JSON too deeply to read; write one flat record per line such as "
                '{"en": "...", "de": "..."}.'
            ) from None
        except ValueError:
            return None  # not JSON: its reader says what is wrong

    stripped = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if stripped[:1] == b"[":  # one JSON array of records
        records = parsed(stripped)
        for record in records if isinstance(records, list) else []:
            walk(record, "")
    else:
        for line in filter(bytes.strip, data.splitlines()):
            walk(parsed(line), "")
    check_width(path, len(names))


def check_columns(path: Path, fmt: str, available: list[str], wanted: list[str]) -> None:
    """Refuse a table whose header names no columns, more than ``MAX_COLUMNS``, or not the ``wanted`` ones."""
    check_width(path, len(available))
    if not any(str(name).strip() for name in available):  # a first line of spaces names none either
        raise DataError(
            f"{path} names no columns (is it empty, or its first line blank?); start it with a header "
            'row such as en,de, or write one JSON record per line such as {"en": "...", "de": "..."}.'
        )
    for column in wanted:
        if column not in available and column.split(".")[0] not in available:  # an exact name wins
            shown = [_short(name) for name in available[:MAX_SHOWN_COLUMNS]]
            more = f" and {len(available) - len(shown)} more" if len(available) > len(shown) else ""
            raise DataError(
                f"{path} has no column {_short(column)!r}; its columns are {shown}{more}. "
                f"Name the right ones, e.g. {path.name}?src={_short(available[0])}&tgt={_short(available[-1])}."
            )


def _short(name: str, width: int = 40) -> str:
    """A column name cut to ``width`` characters for a message: a binary file's header is one huge "name"."""
    return name if len(name) <= width else name[: width - 1] + "…"


def _field(record: dict, column: str, where: str) -> str:
    """The text of ``column`` in a record: an exact column name first (``en.txt``), else a
    nested field (``translation.de``). Anything but text is refused with what to name instead."""
    if column in record:
        value = record[column]
    else:
        value = record
        for part in column.split("."):
            value = value.get(part) if isinstance(value, dict) else None
    if value is None or isinstance(value, str):
        return value or ""
    if isinstance(value, dict):
        fields = ", ".join(f"{column}.{key}" for key in value)
        raise DataError(f"{where}: column {column!r} holds nested fields, not text; name one of them: {fields}")
    raise DataError(
        f"{where}: column {column!r} holds {type(value).__name__} values such as {str(value)[:40]!r}, not text; "
        "name a text column, or convert this one to text first"
    )


def _text_column(records: Dataset, column: str) -> list[str | None] | None:
    """A top-level text column read at once (far faster than record by record); None for
    a nested field or a column of other values, which :func:`_field` reads and checks row by row."""
    import pyarrow as pa

    if column not in records.column_names:
        return None
    values = records.data.column(column)
    return values.to_pylist() if pa.types.is_string(values.type) or pa.types.is_large_string(values.type) else None


def read_rows(
    records: Dataset, source_column: str, target_column: str, where: str, first: int, unit: str = "line"
) -> RawPairs:
    columns = [_text_column(records, column) for column in (source_column, target_column)]
    if columns[0] is not None and columns[1] is not None:
        return [(s or "", t or "") for s, t in zip(*columns, strict=True)]
    rows = []
    for i, record in enumerate(records):
        at = f"{where}, {unit} {i + first}"
        rows.append((_field(record, source_column, at), _field(record, target_column, at)))
    return rows


def clean_table_caches(max_age: float = 3600.0) -> list[Path]:
    """Delete what reading tables left in ``CACHE_DIR`` and no reader uses: scratch folders of
    a killed process, and the Arrow copies and locks that versions before the scratch folders
    kept (untouched for ``max_age`` seconds). Multi30k's and the Hub's caches stay."""
    try:
        entries = list(CACHE_DIR.iterdir())
    except OSError:  # none yet, or not this user's to tidy
        return []
    removed = []
    for entry in entries:
        table = entry.name.startswith(SCRATCH_PREFIX) or entry.name in TABLE_BUILDERS
        lock = entry.name.endswith(".lock") and any(f"_{b}_" in entry.name for b in TABLE_BUILDERS)
        try:
            old = time.time() - entry.stat().st_mtime > max_age
        except OSError:
            continue
        if not ((table or lock) and old):
            continue
        if entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed.append(entry)
    return removed
