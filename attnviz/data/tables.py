"""Pairs from two text columns of a local table: CSV, TSV, JSON Lines or Parquet, read via ``datasets``."""

from __future__ import annotations

import contextlib
import gzip
import re
import tempfile
from collections.abc import Iterator
from io import BufferedIOBase
from pathlib import Path
from typing import TYPE_CHECKING

from attnviz.data import corpora  # corpora.CACHE_DIR read at call time: setting it there moves this cache too
from attnviz.data.corpora import (
    DEFAULT_MAX_BYTES,
    SCRATCH_PREFIX,
    RawPairs,
    check_columns,
    check_file,
    drop_empty_rows,
    json_width,
    load_files,
    no_rows,
    read_rows,
)
from attnviz.data.scratch import own_folder
from attnviz.errors import DataError

if TYPE_CHECKING:
    from pyarrow import DataType, Schema

TABLE_FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "json", ".json": "json", ".parquet": "parquet"}
_NULL_LINE = re.compile(rb"(?:\xef\xbb\xbf)?[ \t]*null")  # a line _refuse_null_records refuses


@contextlib.contextmanager
def _scratch() -> Iterator[str]:
    """A folder for ``datasets``' Arrow copy of one table, removed after the read, inside the user's
    own ``corpora.CACHE_DIR``."""
    folder = own_folder(corpora.CACHE_DIR, "ATTNVIZ_DATASETS_CACHE")
    with tempfile.TemporaryDirectory(prefix=SCRATCH_PREFIX, dir=folder) as scratch:
        yield scratch


def _binary(path: Path) -> BufferedIOBase:
    return gzip.open(path) if path.suffix == ".gz" else open(path, "rb")


def _refuse_null_records(path: Path) -> None:
    """Refuse a line starting with ``null``: pyarrow's JSON reader segfaults on one (apache/arrow#47409).
    Read line by line."""
    with _binary(path) as f:
        for line, text in enumerate(f, start=1):
            m = re.search(rb"(?:\A|\r)(?:\xef\xbb\xbf)?[ \t]*null", text)  # at a line start, after a BOM or spaces
            if m:
                raise DataError(
                    f"{path}, line {line}: a record is null; each line must be a JSON object such as "
                    '{"en": "...", "de": "..."}. Delete the line or fill it in.'
                )


def _text_columns(path: Path, schema: Schema, wanted: list[str]) -> None:
    """Refuse Parquet columns that are not text (numbers, lists, bytes would silently become text)."""
    import pyarrow as pa

    for column in wanted:
        if column not in schema.names:
            continue  # a nested field: checked row by row
        kind = schema.field(column).type
        if pa.types.is_struct(kind):
            fields = ", ".join(f"{column}.{kind.field(i).name}" for i in range(kind.num_fields))
            raise DataError(f"{path}: column {column!r} holds nested fields, not text; name one of them: {fields}")
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
            raise DataError(
                f"{path}: column {column!r} holds {kind} values, not text; name a text column, or write this "
                "one as strings (e.g. df[col] = df[col].astype(str))"
            )


def _dialect(fmt: str) -> dict:
    """How attnviz reads a CSV or TSV (the csv module's options): a TSV by tabs, without quoting, so a
    quote cannot hide a tab; a CSV as the csv module's default."""
    import csv

    return {"delimiter": "\t", "quoting": csv.QUOTE_NONE} if fmt == "tsv" else {}


def _csv_header(path: Path, fmt: str) -> list[str]:
    """The header row of a CSV or TSV file: its column names."""
    import csv

    # as the rows are read, a CSV strictly: an unclosed quote is an error, not a header that runs to the
    # end of the file
    options = _dialect(fmt) if fmt == "tsv" else {"strict": True}
    opener = gzip.open if path.suffix == ".gz" else open

    def refuse(why: object) -> DataError:
        return DataError(f"{path}: the header row is not valid {fmt.upper()} ({why}); check it for an unclosed quote.")

    try:
        with opener(path, "rt", encoding="utf-8-sig", newline="") as f:
            header = next(csv.reader(f, **options), [])
    except csv.Error as e:
        raise refuse(e) from e
    if any("\n" in name or "\r" in name for name in header):
        raise refuse("a column name spans lines")
    return header


def _refuse_extra_fields(path: Path, fmt: str, header: list[str]) -> None:
    """Refuse a CSV or TSV row with more fields than the header (the reader would shift its columns), and
    a file with no row below its header. Read row by row."""
    import csv

    options = _dialect(fmt)
    fix = (  # a TSV is read without quoting: a quote cannot hide a tab
        "remove the tab inside a field, or write the table as CSV with that field quoted"
        if fmt == "tsv"
        else "quote a field that holds a comma"
    )
    opener = gzip.open if path.suffix == ".gz" else open
    start, rows = 1, -1  # the header is the first row
    with opener(path, "rt", encoding="utf-8-sig", newline="") as f:
        reader = csv.reader(f, **options)
        try:
            for row in reader:
                rows += bool(row)  # a blank line is no row
                if len(row) > len(header):
                    raise DataError(
                        f"{path}, line {start}: {len(row)} fields but the header names {len(header)}; {fix}, "
                        "or add a name for each extra column to the header."
                    )
                start = reader.line_num + 1
        except csv.Error:
            return  # e.g. a field over csv's size limit: the table reader names its own problems
    no_rows(path, max(rows, 0))


def table_format(path: str | Path, fmt: str | None = None) -> str:
    """The table format of ``path`` (csv, tsv, json, parquet) from ``fmt`` or the file extension."""
    path = Path(path)
    if fmt is not None and fmt.lower() not in {*TABLE_FORMATS.values(), "jsonl"}:
        raise DataError(
            f"format={fmt!r} is not a table format attnviz reads; use format=csv, tsv, jsonl or parquet, or leave "
            "it out to read the file by its extension"
        )
    suffix = "".join(path.suffixes[-2:-1]) if path.suffix == ".gz" else path.suffix
    fmt = fmt.lower() if fmt else TABLE_FORMATS.get(suffix.lower())
    if fmt == "jsonl":
        fmt = "json"
    if fmt not in TABLE_FORMATS.values():
        raise DataError(
            f"cannot tell the format of {path}; use a .csv, .tsv, .jsonl, .json or .parquet file or "
            "add &format=csv (or tsv, jsonl, parquet) to the spec."
        )
    return fmt


@contextlib.contextmanager
def open_records(
    path: str | Path,
    source_column: str,
    target_column: str,
    *,
    fmt: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Iterator[tuple[object, int, str]]:
    """The checked table as ``datasets`` records (an Arrow copy on disk, read as it is used), the
    line (or row) number of its first record and the unit (``line`` or ``row``); the copy is
    deleted when the block ends (an upload's data is not left on disk). Every check reads the
    file a chunk or a line at a time."""
    path = Path(path)
    fmt = table_format(path, fmt)
    data = check_file(path, max_bytes, text=fmt != "parquet", keep=fmt == "json")
    if fmt == "json":
        json_width(path, data)
        _refuse_null_records(path)
    kwargs: dict = {}
    first_line = 1
    if fmt in ("csv", "tsv"):
        header = _csv_header(path, fmt)
        check_columns(path, fmt, header, [source_column, target_column])
        _refuse_extra_fields(path, fmt, header)
        from datasets import Features, Value

        # every column read as text: "007" stays "007", "NA" stays "NA"
        kwargs = {"features": Features({c: Value("string") for c in header}), "keep_default_na": False}
        kwargs |= {"encoding": "utf-8-sig", **_dialect(fmt)}
        first_line = 2
    elif fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            with pq.ParquetFile(path) as parquet:  # its footer, read once: the schema and the row count
                schema, n_rows = parquet.schema_arrow, parquet.metadata.num_rows
        except Exception as e:
            raise DataError(f"{path} is not a readable Parquet file ({e}); write it again.") from e
        check_columns(path, fmt, schema.names, [source_column, target_column])
        _text_columns(path, schema, [source_column, target_column])
        no_rows(path, n_rows)
    builder = "csv" if fmt == "tsv" else fmt
    with _scratch() as scratch:
        records = load_files(builder, {"train": str(path)}, cache_dir=scratch, **kwargs)["train"]
        if fmt == "json":
            check_columns(path, fmt, list(records.column_names), [source_column, target_column])
        yield records, first_line, "row" if fmt == "parquet" else "line"


def load_table(
    path: str | Path,
    source_column: str,
    target_column: str,
    *,
    fmt: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    empty: str = "drop",
) -> tuple[RawPairs, list[str]]:
    """Pairs from a CSV, TSV, JSON Lines or Parquet file, two of its columns, via ``datasets``."""
    with open_records(path, source_column, target_column, fmt=fmt, max_bytes=max_bytes) as (records, first, unit):
        rows = read_rows(records, source_column, target_column, str(path), first, unit)
    no_rows(path, len(rows))
    notes: list[str] = []
    return drop_empty_rows(rows, str(path), first, empty, notes), notes


def _schema_columns(schema: Schema) -> tuple[list[str], list[str]]:
    """The text columns of an Arrow schema as :func:`_field` reads them (nested ones as ``a.b``;
    an exact name wins), and the others as ``name (type)``."""
    import pyarrow as pa

    top = set(schema.names)
    text: list[str] = []
    other: list[str] = []

    def walk(parts: list[str], kind: DataType) -> None:
        name = ".".join(parts)
        if len(parts) > 1 and (name in top or any("." in part for part in parts)):
            return  # a nested field that name would not reach: an exact column wins, dots split
        if pa.types.is_struct(kind):
            for i in range(kind.num_fields):
                walk([*parts, kind.field(i).name], kind.field(i).type)
        elif pa.types.is_string(kind) or pa.types.is_large_string(kind):
            text.append(name)
        else:
            other.append(f"{name} ({kind})")

    for field in schema:
        walk([field.name], field.type)
    return text, other


def table_columns(path: str | Path, *, fmt: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> list[str]:
    """The columns of a CSV, TSV, JSON Lines or Parquet file that :func:`load_table` can read as
    text: nested text fields as ``a.b``, an exact column name (``en.txt``) as it is. Null JSON
    lines are skipped (loading refuses them, naming the line). A DataError says how to fix a file
    with fewer than two text columns."""
    path = Path(path)
    fmt = table_format(path, fmt)
    data = check_file(path, max_bytes, text=fmt != "parquet", keep=fmt == "json")  # JSON: null lines are cut below
    if fmt in ("csv", "tsv"):
        text, other = _csv_header(path, fmt), []  # every CSV column is read as text
        check_columns(path, fmt, text, [])
        _refuse_extra_fields(path, fmt, text)
    elif fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            schema = pq.read_schema(path)
        except Exception as e:
            raise DataError(f"{path} is not a readable Parquet file ({e}); write it again.") from e
        text, other = _schema_columns(schema)
    else:
        with _scratch() as scratch:
            source = path
            lines = data.splitlines(keepends=True)
            kept = [line for line in lines if not _NULL_LINE.match(line)]
            json_width(path, b"".join(kept))
            if not b"".join(kept).strip():
                raise DataError(
                    f"{path} holds no JSON records (only blank or null lines); write one JSON object per "
                    'line such as {"en": "...", "de": "..."}.'
                )
            if len(kept) < len(lines):
                source = Path(scratch) / path.name.removesuffix(".gz")
                source.write_bytes(b"".join(kept))
            records = load_files("json", {"train": str(source)}, cache_dir=scratch)["train"]
            check_columns(path, fmt, list(records.column_names), [])
            text, other = _schema_columns(records.data.schema)
    if len(text) < 2:
        found = f"only one text column, {text[0]}" if text else "no text column"
        not_text = f" (not text: {', '.join(other)})" if other else ""
        raise DataError(
            f"{path} has {found}{not_text}; a pair needs a source and a target column of text. Write the "
            "sentences as strings, one column per language: a header row such as en,de, or one JSON record "
            'per line such as {"en": "...", "de": "..."}.'
        )
    return text
