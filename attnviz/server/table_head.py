"""How much of an uploaded table the server keeps: its first rows, within a row and a byte limit
(:func:`head_rows`), for CSV, TSV, JSON lines, one JSON array and Parquet."""

from __future__ import annotations

import csv
import io
import itertools
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from attnviz.errors import DataError

if TYPE_CHECKING:
    import pyarrow as pa

MAX_ROW_GROUP_BYTES = 256 * 2**20  # a Parquet row group stored larger than this is refused unread


def _record_lines(data: bytes, fmt: str) -> Iterator[int]:
    """The number of lines read at the end of each record (the CSV/TSV header first)."""
    if fmt != "csv":
        yield from itertools.count(1)  # one record a line (TSV is read unquoted)
        return
    reader = csv.reader(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline=""))
    for _ in reader:
        yield reader.line_num  # a quoted field may hold newlines


def _lines_head(data: bytes, fmt: str, max_rows: int, max_bytes: int) -> tuple[bytes, int] | None:
    header = int(fmt in ("csv", "tsv"))
    end = line = kept = 0
    try:
        for lines in _record_lines(data, fmt):
            start = end
            while line < lines:
                found = data.find(b"\n", end)
                if found < 0:
                    return None  # the last record: the whole file is within the limits
                end, line = found + 1, line + 1
            if end > max_bytes and kept > header:
                return data[:start], kept - header
            kept += 1
            if kept == max_rows + header:
                return (data[:end], max_rows) if data[end:].strip() else None
    except (csv.Error, UnicodeDecodeError):
        return None
    return None


def _row_sizes(table: pa.Table) -> np.ndarray:
    """The bytes each row of ``table`` decodes to ``[rows]``, its text columns read as dictionaries
    (a repeated string is counted every time it is used, never expanded)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    sizes = np.zeros(table.num_rows, dtype=np.int64)  # [rows]
    for column in table.columns:
        if pa.types.is_dictionary(column.type):
            lengths = [pc.take(pc.binary_length(c.dictionary), c.indices) for c in column.chunks]
            sizes += np.concatenate([x.fill_null(0).to_numpy(zero_copy_only=False) for x in lengths] or [[]])
        else:
            sizes += column.nbytes // max(1, table.num_rows)
    return sizes


def _parquet_head(data: bytes, max_rows: int, max_bytes: int) -> tuple[bytes, int] | None:
    """A Parquet file's first rows within the limits, measured before they are decoded: its text read
    as dictionaries, one row group at a time, each refused above ``MAX_ROW_GROUP_BYTES`` stored
    uncompressed (a few KB of zstd can hold gigabytes of repeated text)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        plain = pq.ParquetFile(pa.BufferReader(data))
        kinds = (pa.types.is_string, pa.types.is_large_string, pa.types.is_binary, pa.types.is_large_binary)
        texts = [f.name for f in plain.schema_arrow if any(kind(f.type) for kind in kinds)]
        parquet = pq.ParquetFile(pa.BufferReader(data), read_dictionary=texts)
    except Exception:  # pyarrow raises several types for a broken file: the loader says what is wrong
        return None
    kept: list[pa.Table] = []
    rows = size = 0
    for group in range(parquet.metadata.num_row_groups):
        meta = parquet.metadata.row_group(group)
        stored = sum(meta.column(c).total_uncompressed_size for c in range(meta.num_columns))
        if stored > MAX_ROW_GROUP_BYTES:
            if kept:
                break
            raise DataError(
                f"this Parquet file's first row group is {stored / 2**20:,.0f} MB uncompressed, more than an "
                f"upload may decode here ({MAX_ROW_GROUP_BYTES // 2**20} MB); write it with smaller row groups "
                "(row_group_size) or as CSV"
            )
        table = parquet.read_row_group(group)
        sizes = np.cumsum(_row_sizes(table)) + size  # [rows]
        fit = min(int(np.searchsorted(sizes, max_bytes, side="right")), max_rows - rows)
        fit = min(max(fit, int(not rows)), table.num_rows)  # the first row is kept whatever its size
        kept.append(table.slice(0, fit))
        rows, size = rows + fit, int(sizes[fit - 1]) if fit else size
        if fit < table.num_rows:
            break
    else:
        return None  # every row within the limits: the file is kept as it is
    head = pa.concat_tables(kept).cast(plain.schema_arrow)  # the kept rows as plain text again
    sink = pa.BufferOutputStream()
    pq.write_table(head, sink)
    return sink.getvalue().to_pybytes(), rows


def _array_head(data: bytes, max_rows: int, max_bytes: int) -> tuple[bytes, int] | None:
    try:
        records = json.loads(data)
    except RecursionError:
        raise DataError(
            "this JSON file nests arrays or objects too deeply to read; give one flat record per line (JSON Lines)"
        ) from None
    except ValueError:
        return None
    rows = size = 0
    for record in records[:max_rows]:
        size += len(json.dumps(record, ensure_ascii=False).encode())
        if size > max_bytes and rows:
            break
        rows += 1
    return (json.dumps(records[:rows], ensure_ascii=False).encode(), rows) if rows < len(records) else None


def head_rows(data: bytes, fmt: str, max_rows: int, max_bytes: int) -> tuple[bytes, int] | None:
    """The first rows of a table file's bytes, at most ``max_rows`` rows and about ``max_bytes``
    bytes of them (whole rows, the CSV/TSV header kept), and how many rows that is; None when the
    file is within both limits, or cannot be parsed (the loader then says what is wrong). Raises
    :class:`DataError` for a Parquet file whose first row group is stored over ``MAX_ROW_GROUP_BYTES``
    uncompressed, or a JSON array nested too deeply to read."""
    if fmt == "parquet":
        return _parquet_head(data, max_rows, max_bytes)
    if fmt == "json" and data.lstrip()[:1] == b"[":  # one JSON array
        return _array_head(data, max_rows, max_bytes)
    if len(data) <= max_bytes and data.count(b"\n") < max_rows + (fmt in ("csv", "tsv")):
        return None  # the common case, decided fast
    return _lines_head(data, fmt, max_rows, max_bytes)
