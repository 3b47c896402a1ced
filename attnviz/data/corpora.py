"""Real corpora read through Hugging Face ``datasets``: Multi30k, local tables, Hub datasets.

Each loader returns raw ``(source, target)`` text pairs per split plus notes on anything it
dropped; ``spec.load_corpus`` tokenizes, filters and splits them. Every problem with the
input is a ``DataError`` naming the file, the line and what to do.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import re
import shutil
import socket
import tempfile
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

from attnviz.errors import DataError

RawPairs = list[tuple[str, str]]
DEFAULT_MULTI30K = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "multi30k"
MULTI30K_LANGUAGES = ("en", "de", "fr")
MULTI30K_FILES = {"train": "train", "valid": "val", "test": "test_2016_flickr"}
DEFAULT_MAX_BYTES = 256 * 2**20
TABLE_FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "json", ".json": "json", ".parquet": "parquet"}
CACHE_DIR = Path(os.environ.get("ATTNVIZ_DATASETS_CACHE", Path(tempfile.gettempdir()) / "attnviz-datasets"))
SCRATCH_PREFIX = "scratch-"  # a table's Arrow copy lives in CACHE_DIR/scratch-* only while it is read
TABLE_BUILDERS = ("csv", "json", "parquet")  # the datasets builders of local tables


@contextlib.contextmanager
def _quiet_datasets() -> Iterator[object]:
    """Import ``datasets`` with its progress bars off (they would garble CLI output)."""
    import datasets

    was_disabled = datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        yield datasets
    finally:
        if not was_disabled:
            datasets.enable_progress_bars()


def _load(builder: str, files: dict[str, str], cache_dir: str | None = None, **kwargs) -> dict[str, list[dict]]:
    """``datasets.load_dataset`` on local files (its Arrow copy in ``cache_dir``, default
    ``CACHE_DIR``), any failure turned into a DataError."""
    with _quiet_datasets() as datasets:
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


def check_file(path: Path, max_bytes: int = DEFAULT_MAX_BYTES, text: bool = True) -> bytes | None:
    """Refuse a missing or over-large file, or (``text``) one whose bytes are not UTF-8; return those bytes."""
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
    try:
        if path.suffix == ".gz":
            with gzip.open(path) as f:
                data = f.read(max_bytes + 1)
        else:
            data = path.read_bytes()
    except (OSError, EOFError, zlib.error) as e:
        raise DataError(f"{path} is not a readable gzip file ({e}); decompress it or fetch it again.") from e
    if len(data) > max_bytes:
        raise DataError(
            f"{path} holds more than {max_bytes / 2**20:.0f} MB of text once decompressed; "
            "load a sample of it or raise max_bytes."
        )
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise DataError(
            f"{path}, line {line}, column {column}: byte {data[e.start]:#04x} is not UTF-8; re-save the "
            "file as UTF-8 (e.g. `iconv -f latin1 -t utf-8 in > out`)."
        ) from e
    return data


def _refuse_null_records(path: Path, data: bytes) -> None:
    """Refuse a line starting with ``null``: pyarrow's JSON reader segfaults on one (apache/arrow#47409)."""
    m = re.search(rb"(?:\A|[\r\n])(?:\xef\xbb\xbf)?[ \t]*null", data)  # at a line start, after a BOM or spaces
    if m:
        line = data.count(b"\n", 0, m.end()) + 1
        raise DataError(
            f"{path}, line {line}: a record is null; each line must be a JSON object such as "
            '{"en": "...", "de": "..."}. Delete the line or fill it in.'
        )


def _empty_rows(rows: RawPairs, where: str, first_line: int, empty: str, notes: list[str]) -> RawPairs:
    """Drop (and note) or refuse pairs with an empty side; ``first_line`` numbers the first row."""
    bad = [i for i, (s, t) in enumerate(rows) if not s.strip() or not t.strip()]
    if not bad:
        return rows
    lines = ", ".join(str(i + first_line) for i in bad[:5]) + (", ..." if len(bad) > 5 else "")
    if empty == "error" or len(bad) == len(rows):
        raise DataError(
            f"{where}: {len(bad)} of {len(rows)} rows have an empty source or target (line {lines}); "
            "fill or delete them, or load with empty='drop' to skip them."
        )
    notes.append(f"{where}: dropped {len(bad)} rows with an empty side (line {lines})")
    drop = set(bad)
    return [r for i, r in enumerate(rows) if i not in drop]


def _find(folder: Path, stem: str) -> Path | None:
    for name in (f"{stem}.gz", stem):
        if (folder / name).is_file():
            return folder / name
    return None


def load_multi30k(
    source: str,
    target: str,
    folder: str | Path | None = None,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    empty: str = "drop",
) -> tuple[dict[str, RawPairs], list[str]]:
    """Multi30k pairs per split from ``folder`` (``train.en.gz``, ``val.de``, ...; gzipped or not)."""
    for lang in (source, target):
        if lang not in MULTI30K_LANGUAGES:
            raise DataError(f"Multi30k has no language {lang!r}; choose from {', '.join(MULTI30K_LANGUAGES)}.")
    if source == target:
        raise DataError(f"source and target are both {source!r}; name two different languages.")
    folder = Path(folder) if folder is not None else DEFAULT_MULTI30K
    if not folder.is_dir():
        raise DataError(
            f"Multi30k folder {folder} does not exist; name the folder that holds train.en.gz, "
            "val.en.gz, test_2016_flickr.en.gz, ... (e.g. multi30k-de-en@/path/to/multi30k)."
        )
    found = {
        (split, lang): _find(folder, f"{stem}.{lang}")
        for split, stem in MULTI30K_FILES.items()
        for lang in MULTI30K_LANGUAGES
    }
    if not any(found.values()):
        listing = ", ".join(sorted(p.name for p in folder.iterdir())[:10]) or "nothing"
        raise DataError(
            f"{folder} has no Multi30k files (expected train.en.gz, val.de.gz, test_2016_flickr.fr.gz "
            f"or the same without .gz; found {listing}); rename the files or name another folder."
        )
    notes: list[str] = []
    splits: dict[str, RawPairs] = {}
    for split, stem in MULTI30K_FILES.items():
        paths = [found[split, source], found[split, target]]
        if paths == [None, None] and split != "train":
            notes.append(f"{folder}: no {stem}.{source}/{stem}.{target}; the {split} split is cut from train")
            continue
        for lang, path in zip((source, target), paths, strict=True):
            if path is None:
                have = sorted({lang for (s, lang), p in found.items() if s == split and p})
                raise DataError(
                    f"{folder} has no {stem}.{lang}.gz (nor {stem}.{lang}); it has {split} files for "
                    f"{', '.join(have) or 'no language'}. Add the file or choose another language pair."
                )
            check_file(path, max_bytes)
        src_path, tgt_path = paths
        columns = _load("text", {"src": str(src_path), "tgt": str(tgt_path)})
        src_lines, tgt_lines = columns["src"]["text"], columns["tgt"]["text"]
        if len(src_lines) != len(tgt_lines):
            short, long_ = sorted([(len(src_lines), src_path), (len(tgt_lines), tgt_path)], key=lambda x: x[0])
            raise DataError(
                f"{src_path.name} has {len(src_lines)} lines but {tgt_path.name} has {len(tgt_lines)}: "
                f"line {short[0] + 1} of {long_[1]} has no partner in {short[1]}. The files must be "
                "line-aligned translations; check that neither was truncated or edited."
            )
        rows = list(zip(src_lines, tgt_lines, strict=True))
        splits[split] = _empty_rows(rows, f"{src_path.name}/{tgt_path.name}", 1, empty, notes)
    return splits, notes


def _columns(path: Path, fmt: str, available: list[str], wanted: list[str]) -> None:
    if not available:
        raise DataError(
            f"{path} names no columns (is it empty, or its first line blank?); start it with a header "
            'row such as en,de, or write one JSON record per line such as {"en": "...", "de": "..."}.'
        )
    for column in wanted:
        if column not in available and column.split(".")[0] not in available:  # an exact name wins
            raise DataError(
                f"{path} has no column {column!r}; its columns are {available}. "
                f"Name the right ones, e.g. {path.name}?src={available[0]}&tgt={available[-1]}."
            )


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


def _text_column(records, column: str) -> list[str | None] | None:
    """A top-level text column read at once (100 times faster than record by record); None for
    a nested field or a column of other values, which :func:`_field` reads and checks row by row."""
    import pyarrow as pa

    if column not in records.column_names:
        return None
    values = records.data.column(column)
    return values.to_pylist() if pa.types.is_string(values.type) or pa.types.is_large_string(values.type) else None


def _rows(records, source_column: str, target_column: str, where: str, first: int, unit: str = "line") -> RawPairs:
    columns = [_text_column(records, column) for column in (source_column, target_column)]
    if columns[0] is not None and columns[1] is not None:
        return [(s or "", t or "") for s, t in zip(*columns, strict=True)]
    rows = []
    for i, record in enumerate(records):
        at = f"{where}, {unit} {i + first}"
        rows.append((_field(record, source_column, at), _field(record, target_column, at)))
    return rows


def _text_columns(path: Path, schema, wanted: list[str]) -> None:
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


def _csv_header(path: Path, fmt: str) -> list[str]:
    """The header row of a CSV or TSV file: its column names."""
    import csv

    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8-sig", newline="") as f:
            return next(csv.reader(f, delimiter="\t" if fmt == "tsv" else ","), [])
    except csv.Error as e:
        raise DataError(
            f"{path}: the header row is not valid {fmt.upper()} ({e}); check it for an unclosed quote."
        ) from e


def table_format(path: str | Path, fmt: str | None = None) -> str:
    """The table format of ``path`` (csv, tsv, json, parquet) from ``fmt`` or the file extension."""
    path = Path(path)
    suffix = "".join(path.suffixes[-2:-1]) if path.suffix == ".gz" else path.suffix
    fmt = fmt or TABLE_FORMATS.get(suffix.lower())
    if fmt == "jsonl":
        fmt = "json"
    if fmt not in TABLE_FORMATS.values():
        raise DataError(
            f"cannot tell the format of {path}; use a .csv, .tsv, .jsonl, .json or .parquet file or "
            "add &format=csv (or tsv, jsonl, parquet) to the spec."
        )
    return fmt


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
    path = Path(path)
    fmt = table_format(path, fmt)
    data = check_file(path, max_bytes, text=fmt != "parquet")
    if fmt == "json":
        _refuse_null_records(path, data)
    kwargs: dict = {}
    first_line = 1
    if fmt in ("csv", "tsv"):
        import csv

        header = _csv_header(path, fmt)
        _columns(path, fmt, header, [source_column, target_column])
        from datasets import Features, Value

        # every column read as text: "007" stays "007", "NA" stays "NA"
        kwargs = {"features": Features({c: Value("string") for c in header}), "keep_default_na": False}
        kwargs |= {"encoding": "utf-8-sig"}
        if fmt == "tsv":
            kwargs |= {"delimiter": "\t", "quoting": csv.QUOTE_NONE}
        first_line = 2
    elif fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            schema = pq.read_schema(path)
        except Exception as e:
            raise DataError(f"{path} is not a readable Parquet file ({e}); write it again.") from e
        _columns(path, fmt, schema.names, [source_column, target_column])
        _text_columns(path, schema, [source_column, target_column])
    builder = "csv" if fmt == "tsv" else fmt
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    # the Arrow copy datasets makes is read here once: it goes with the scratch folder (an upload's
    # data is not left on disk)
    with tempfile.TemporaryDirectory(prefix=SCRATCH_PREFIX, dir=CACHE_DIR) as scratch:
        records = _load(builder, {"train": str(path)}, cache_dir=scratch, **kwargs)["train"]
        if fmt == "json":
            _columns(path, fmt, list(records.column_names), [source_column, target_column])
        unit = "row" if fmt == "parquet" else "line"
        rows = _rows(records, source_column, target_column, str(path), first_line, unit)
    if not rows:
        raise DataError(f"{path} holds no rows; add some or pick another file.")
    notes: list[str] = []
    return _empty_rows(rows, str(path), first_line, empty, notes), notes


def _schema_columns(schema) -> tuple[list[str], list[str]]:
    """The text columns of an Arrow schema as :func:`_field` reads them (nested ones as ``a.b``;
    an exact name wins), and the others as ``name (type)``."""
    import pyarrow as pa

    top = set(schema.names)
    text: list[str] = []
    other: list[str] = []

    def walk(parts: list[str], kind) -> None:
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


_NULL_LINE = re.compile(rb"(?:\xef\xbb\xbf)?[ \t]*null")  # a line _refuse_null_records refuses


def table_columns(path: str | Path, *, fmt: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> list[str]:
    """The columns of a CSV, TSV, JSON Lines or Parquet file that :func:`load_table` can read as
    text: nested text fields as ``a.b``, an exact column name (``en.txt``) as it is. Null JSON
    lines are skipped (loading refuses them, naming the line). A DataError says how to fix a file
    with fewer than two text columns."""
    path = Path(path)
    fmt = table_format(path, fmt)
    data = check_file(path, max_bytes, text=fmt != "parquet")
    if fmt in ("csv", "tsv"):
        text, other = _csv_header(path, fmt), []  # every CSV column is read as text
        _columns(path, fmt, text, [])
    elif fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            schema = pq.read_schema(path)
        except Exception as e:
            raise DataError(f"{path} is not a readable Parquet file ({e}); write it again.") from e
        text, other = _schema_columns(schema)
    else:
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=SCRATCH_PREFIX, dir=CACHE_DIR) as scratch:
            source = path
            lines = data.splitlines(keepends=True)
            kept = [line for line in lines if not _NULL_LINE.match(line)]
            if not b"".join(kept).strip():
                raise DataError(
                    f"{path} holds no JSON records (only blank or null lines); write one JSON object per "
                    'line such as {"en": "...", "de": "..."}.'
                )
            if len(kept) < len(lines):
                source = Path(scratch) / path.name.removesuffix(".gz")
                source.write_bytes(b"".join(kept))
            records = _load("json", {"train": str(source)}, cache_dir=scratch)["train"]
            _columns(path, fmt, list(records.column_names), [])
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


def clean_table_caches(max_age: float = 3600.0) -> list[Path]:
    """Delete what reading tables left in ``CACHE_DIR`` and no reader uses: scratch folders of
    a killed process, and the Arrow copies and locks that versions before the scratch folders
    kept (untouched for ``max_age`` seconds). Multi30k's and the Hub's caches stay."""
    if not CACHE_DIR.is_dir():
        return []
    removed = []
    for entry in CACHE_DIR.iterdir():
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


def network_available(host: str = "huggingface.co", timeout: float = 1.0) -> bool:
    """Whether a TCP connection to ``host`` opens within ``timeout`` seconds."""
    try:
        with socket.create_connection((host, 443), timeout=timeout):
            return True
    except OSError:
        return False


def _go_offline() -> None:
    """Set the offline flags, also in modules that read them at import time."""
    os.environ["HF_HUB_OFFLINE"] = os.environ["HF_DATASETS_OFFLINE"] = "1"
    import datasets.config
    import huggingface_hub.constants

    datasets.config.HF_HUB_OFFLINE = datasets.config.HF_DATASETS_OFFLINE = True
    huggingface_hub.constants.HF_HUB_OFFLINE = True


def load_hub(
    name: str,
    source_column: str,
    target_column: str,
    *,
    config: str | None = None,
    split: str = "train",
    empty: str = "drop",
) -> tuple[RawPairs, list[str]]:
    """Pairs from a Hugging Face Hub dataset; offline, fails at once with a DataError."""
    flags = (
        os.environ.get(v, "").upper() in ("1", "TRUE", "YES", "ON") for v in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
    )
    offline = any(flags) or not network_available()
    if offline:
        _go_offline()
    with _quiet_datasets() as datasets:
        try:
            records = datasets.load_dataset(name, config, split=split, cache_dir=str(CACHE_DIR))
        except Exception as e:
            if offline or isinstance(e, ConnectionError):
                raise DataError(
                    f"cannot load {name!r} from the Hugging Face Hub: this machine is offline "
                    f"({type(e).__name__}). Download the data elsewhere and load the file instead, e.g. "
                    "pairs.csv?src=en&tgt=de (CSV, TSV, JSON Lines or Parquet)."
                ) from e
            raise DataError(f"cannot load {name!r} (config {config!r}, split {split!r}) from the Hub: {e}") from e
    _columns(Path(f"hf:{name}"), "hub", list(records.column_names), [source_column, target_column])
    rows = _rows(records, source_column, target_column, f"hf:{name}", 1, "row")
    notes: list[str] = []
    return _empty_rows(rows, f"hf:{name}", 1, empty, notes), notes
