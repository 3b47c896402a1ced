"""Property-based fuzzing (hypothesis) of the table loaders: ``load_corpus`` on generated and
garbage CSV/TSV/JSON Lines/Parquet files gives a usable corpus or a one-line ``AttnvizError``.

Generated inputs per run (``max_examples``; the explicit ``@example`` cases come on top): hostile
tables 90, well-formed tables 40, garbage bytes 300."""

from __future__ import annotations

import csv
import gzip
import io
import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from attnviz.data import corpora
from attnviz.data.pairs import Corpus
from attnviz.data.spec import load_corpus
from attnviz.errors import AttnvizError
from tests.support.hostile import HOSTILE, file_char

_names = itertools.count()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder for generated files, with the ``datasets`` cache inside it (restored afterwards)."""
    folder = tmp_path_factory.mktemp("fuzz-data")
    saved = corpora.CACHE_DIR
    corpora.CACHE_DIR = folder / "cache"
    yield folder
    corpora.CACHE_DIR = saved


def fresh(folder: Path, suffix: str, data: bytes) -> Path:
    """A new file (never reused: the ``datasets`` cache keys on path and mtime)."""
    path = folder / f"f{next(_names)}{suffix}"
    path.write_bytes(data)
    return path


def check_load(spec: str, **kwargs) -> None:
    """``load_corpus`` gives a usable Corpus or a one-line AttnvizError; anything else fails the test."""
    try:
        corpus = load_corpus(spec, **kwargs)
    except AttnvizError as e:
        msg = str(e)
        assert msg.strip() and "\n" not in msg, repr(msg)
        event(f"refused: {type(e).__name__}")
        return
    event("loaded")
    assert isinstance(corpus, Corpus) and corpus.train
    for pair in corpus.train + corpus.valid + corpus.test:
        assert pair.source_tokens and pair.target_tokens
        assert all(isinstance(t, str) and t for t in pair.source_tokens + pair.target_tokens)


CELL_CHARS = st.one_of(st.sampled_from([*",\"\t\n\r\x00 <>&'\\;{}[]:", "😀", "\u202e", "\u0301"]), file_char)
WORDS = ["dog", "Hund", "runs", "😀", "<b>x</b>", "<script>alert(1)</script>", "שלום", "e\u0301", "x\x00y", "a,b"]
words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)  # rows that load
cells = st.one_of(
    words,
    words,
    st.text(CELL_CHARS, max_size=20),
    st.sampled_from([t for t in HOSTILE if "\ud800" not in t]),
    st.sampled_from(["a b", "c d", "NA", "null", "007", "1e3", "True", "", "a,b", '"', '""']),
)
column_names = st.sampled_from(["a", "b", "c", "", " a", "a.b", "<b>", '"a"', "a\tb"])


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[str], list[list[str]]]:
    """A header and rows of hostile cells; usually one cell per column, sometimes ragged."""
    header = draw(st.one_of(st.just(["a", "b"]), st.just(["b", "c", "a"]), st.lists(column_names, max_size=4)))
    width = st.integers(0, 4) if draw(st.integers(0, 4)) == 0 else st.just(len(header))
    rows = draw(st.lists(width.flatmap(lambda n: st.lists(cells, min_size=n, max_size=n)), max_size=10))
    return header, rows


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(CELL_CHARS, max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "x"]), inner, max_size=3),
    max_leaves=6,
)


def write_table(fmt: str, header: list[str], rows: list[list[str]], data: st.DataObject) -> tuple[str, bytes]:
    """Serialize a table as ``fmt``; returns the file suffix and the bytes."""
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator=data.draw(st.sampled_from(["\n", "\r\n"])))
        writer.writerows([header, *rows])
        return ".csv", out.getvalue().encode()
    if fmt == "csv-unquoted":
        return ".csv", "\n".join(",".join(r) for r in [header, *rows]).encode()
    if fmt == "tsv":
        return ".tsv", ("\n".join("\t".join(r) for r in [header, *rows]) + "\n").encode()
    if fmt == "jsonl":
        ascii_ = data.draw(st.booleans())
        lines = [json.dumps(dict(zip(header, r, strict=False)), ensure_ascii=ascii_) for r in rows]
        return ".jsonl", "\n".join(lines).encode()
    if fmt == "jsonl-values":
        records = data.draw(st.lists(json_values, max_size=8))
        return ".jsonl", "\n".join(json.dumps(r) for r in records).encode()
    # parquet: a well-formed table (pyarrow wants distinct column names and rows of one width)
    names = list(dict.fromkeys(header)) or ["a"]
    frame = pd.DataFrame([(r + [""] * len(names))[: len(names)] for r in rows], columns=names, dtype=str)
    out = io.BytesIO()
    frame.to_parquet(out)
    return ".parquet", out.getvalue()


@settings(max_examples=90, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tables(),
    st.sampled_from(["csv", "csv", "csv-unquoted", "tsv", "jsonl", "jsonl-values", "parquet"]),
    st.booleans(),
    st.sampled_from([("a", "b"), ("a", "b"), ("b", "a"), ("a", "a.b"), ("c", "b")]),
    st.sampled_from(["drop", "error"]),
    st.data(),
)
def test_load_generated_table(data_dir: Path, table, fmt: str, gz: bool, columns, empty: str, data) -> None:
    """Well-formed and malformed tables with hostile cells load, or fail with a one-line AttnvizError."""
    header, rows = table
    suffix, raw = write_table(fmt, header, rows, data)
    if gz and suffix != ".parquet":
        suffix, raw = suffix + ".gz", gzip.compress(raw)
    path = fresh(data_dir, suffix, raw)
    check_load(f"{path}?src={columns[0]}&tgt={columns[1]}", empty=empty)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(words, words, words), min_size=3, max_size=10, unique_by=lambda r: r[:2]),
    st.sampled_from([["a", "b"], ["b", "a"], ["c", "a", "b"]]),
    st.sampled_from(["csv", "tsv", "jsonl", "parquet"]),
    st.booleans(),
    st.data(),
)
def test_load_well_formed_table(data_dir: Path, rows, header: list[str], fmt: str, gz: bool, data) -> None:
    """A well-formed table of distinct pairs (emoji, HTML, RTL, NUL in the text) loads every pair as written."""
    cells = [[dict(zip("abc", r, strict=True))[name] for name in header] for r in rows]
    suffix, raw = write_table(fmt, header, cells, data)
    if gz and suffix != ".parquet":
        suffix, raw = suffix + ".gz", gzip.compress(raw)
    corpus = load_corpus(f"{fresh(data_dir, suffix, raw)}?src=a&tgt=b")
    pairs = corpus.train + corpus.valid + corpus.test
    assert sorted((p.source, p.target) for p in pairs) == sorted((a, b) for a, b, _ in rows)


PREFIXES = [b"", b"", b"a,b\n", b"a\tb\n", b'{"a": "x", "b": ', b"PAR1", b"\x1f\x8b\x08\x00", b"\xef\xbb\xbf"]
GOOD = b"a,b\n" + b"".join(f"x{i} y,z{i}\n".encode() for i in range(6))


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from([".csv", ".tsv", ".jsonl", ".json", ".parquet", ".csv.gz", ".jsonl.gz"]),
    st.sampled_from(PREFIXES),
    st.one_of(st.binary(max_size=300), st.text(CELL_CHARS, max_size=200).map(str.encode)),
    st.sampled_from([1, 1, 1, 50]),
)
@example(".csv", b"", b"", 1)
@example(".tsv", b"\n\n", b"", 1)
@example(".csv", b'"a,b\n', b"x", 140_000)  # an unclosed quote: a field above csv's size limit
@example(".csv", GOOD, b"\xff", 1)
@example(".csv", GOOD[:-1], b"\x00", 1)
@example(".csv.gz", gzip.compress(GOOD)[:-4], b"", 1)
@example(".parquet", b"PAR1", b"PAR1", 1)
@example(".jsonl", b"", b"null", 1)  # pyarrow segfaulted on a record that is null
@example(".jsonl", b'{"a": "x", "b": "y"}\n', b" null", 1)
@example(".json", b"\xef\xbb\xbf", b"[\nnull\n]", 1)
def test_load_garbage_bytes(data_dir: Path, suffix: str, prefix: bytes, garbage: bytes, repeat: int) -> None:
    """Random bytes (invalid UTF-8, broken gzip, fake Parquet, stray nulls) load or give a one-line DataError."""
    path = fresh(data_dir, suffix, prefix + garbage * repeat)
    check_load(f"{path}?src=a&tgt=b")
