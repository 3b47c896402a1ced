"""How much of an uploaded table the server keeps: its first rows, within a row and a byte limit
(:func:`head_rows`), for CSV, TSV, JSON lines, one JSON array and Parquet."""

from __future__ import annotations

import csv
import io
import itertools
import json
from collections.abc import Iterator


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


def _parquet_head(data: bytes, max_rows: int, max_bytes: int) -> tuple[bytes, int] | None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(pa.BufferReader(data))
    except Exception:  # pyarrow raises several types for a broken file
        return None
    rows = min(max_rows, table.num_rows, int(table.num_rows * max_bytes / max(1, table.nbytes)))
    if rows >= table.num_rows:
        return None
    sink = pa.BufferOutputStream()
    pq.write_table(table.slice(0, max(1, rows)), sink)
    return sink.getvalue().to_pybytes(), max(1, rows)


def _array_head(data: bytes, max_rows: int, max_bytes: int) -> tuple[bytes, int] | None:
    try:
        records = json.loads(data)
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
    file is within both limits, or cannot be parsed (the loader then says what is wrong)."""
    if fmt == "parquet":
        return _parquet_head(data, max_rows, max_bytes)
    if fmt == "json" and data.lstrip()[:1] == b"[":  # one JSON array
        return _array_head(data, max_rows, max_bytes)
    if len(data) <= max_bytes and data.count(b"\n") < max_rows + (fmt in ("csv", "tsv")):
        return None  # the common case, decided fast
    return _lines_head(data, fmt, max_rows, max_bytes)
