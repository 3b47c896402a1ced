"""How much of an uploaded table the server keeps, measured before it is decoded: a Parquet file of a
few KB that decodes to megabytes is cut by its decoded size, a row group stored too large is refused
unread, and a JSON array nested too deeply to read gets a message."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from attnviz.errors import DataError
from attnviz.server import table_head


def _parquet(table: pa.Table, **options) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **options)
    return sink.getvalue().to_pybytes()


def test_a_small_parquet_of_repeated_text_is_cut_by_what_it_decodes_to():
    rows = 3000
    bomb = _parquet(
        pa.table({"en": ["x" * 10_000] * rows, "fr": ["y"] * rows, "n": list(range(rows))}),
        compression="zstd",
        row_group_size=500,
    )
    assert len(bomb) < 20_000  # 30 MB of text in a few KB
    head, kept = table_head.head_rows(bomb, "parquet", 100_000, 2**20)
    assert kept == 2**20 // (10_000 + 1 + 8)  # whole rows within 1 MB of text (the int column's 8 bytes counted)
    back = pq.read_table(pa.BufferReader(head))
    assert back.num_rows == kept and back.schema.field("en").type == pa.string()  # plain text again
    assert back.column("n").to_pylist()[-1] == kept - 1


def test_a_parquet_within_the_limits_is_kept_as_it_is_and_rows_are_cut_across_row_groups():
    data = _parquet(pa.table({"en": [f"a{i}" for i in range(10)], "fr": ["b"] * 10}), row_group_size=3)
    assert table_head.head_rows(data, "parquet", 10, 10**6) is None
    head, kept = table_head.head_rows(data, "parquet", 7, 10**6)
    assert kept == 7 and pq.read_table(pa.BufferReader(head)).column("en").to_pylist()[-1] == "a6"


def test_a_row_group_stored_too_large_is_refused_unread(monkeypatch):
    monkeypatch.setattr(table_head, "MAX_ROW_GROUP_BYTES", 50_000)
    data = _parquet(pa.table({"en": ["x" * 1000] * 100, "fr": ["y"] * 100}), use_dictionary=False, compression="zstd")
    with pytest.raises(DataError, match=r"first row group is 0 MB uncompressed, more than an upload may decode here"):
        table_head.head_rows(data, "parquet", 100_000, 10**6)


def test_a_json_array_nested_too_deeply_gets_a_message():
    with pytest.raises(DataError, match="nests arrays or objects too deeply"):
        table_head.head_rows(b"[" * 100_000, "json", 10, 10**6)
    assert table_head.head_rows(json.dumps([{"en": "a", "fr": "b"}]).encode(), "json", 10, 10**6) is None


def test_cutting_a_parquet_bomb_never_decodes_it():
    import subprocess
    import sys

    # a process of its own, so that pyarrow's peak is this cut's alone; it loads table_head by its file
    # (no torch) and keeps pyarrow to one thread
    script = (
        "import importlib.util, sys\n"
        "import pyarrow as pa, pyarrow.parquet as pq\n"
        "pa.set_cpu_count(1)\n"
        "pa.set_io_thread_count(1)\n"
        f"spec = importlib.util.spec_from_file_location('table_head', {table_head.__file__!r})\n"
        "table_head = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(table_head)\n"
        "part = pa.table({'en': ['x' * 10_000] * 1000, 'fr': ['y'] * 1000})\n"
        "sink = pa.BufferOutputStream()\n"
        "with pq.ParquetWriter(sink, part.schema, compression='zstd') as writer:\n"
        "    for _ in range(30):\n"
        "        writer.write_table(part)\n"
        "bomb = sink.getvalue().to_pybytes()\n"
        "pool = pa.default_memory_pool()\n"
        "head, kept = table_head.head_rows(bomb, 'parquet', 100_000, 2**20)\n"
        "print(len(bomb), kept, pool.max_memory())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    size, kept, peak = map(int, done.stdout.split())
    assert size < 100_000 and kept == 2**20 // 10_001  # 300 MB of text in a small file, cut to 1 MB of it
    assert peak < 60 * 2**20  # one 10 MB part written, never the 300 MB decoded
