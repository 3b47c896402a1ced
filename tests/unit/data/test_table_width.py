"""A table of sentence pairs is refused before it is read when it is too wide to be one (a header of
thousands of columns, a JSON record of thousands of keys) or nests too deeply to read."""

from __future__ import annotations

import json

import pytest

from attnviz.data import corpora, load_corpus, table_columns
from attnviz.errors import DataError


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("wide.csv", ",".join(f"c{i}" for i in range(2000)) + "\n" + ",".join("x" * 2000) + "\n"),
        ("wide.jsonl", json.dumps({f"k{i}": "x" for i in range(2000)}) + "\n"),
        ("nested.jsonl", json.dumps({"t": {f"k{i}": "x" for i in range(1500)}, "en": "a"}) + "\n"),
        ("array.json", json.dumps([{f"k{i}": "x"} for i in range(2000)])),
    ],
)
def test_a_table_too_wide_to_be_pairs_is_refused_before_it_is_read(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(
        DataError, match=r"has [\d,]+ columns, more than a table of sentence pairs may have here \(1,000\)"
    ):
        table_columns(path)
    with pytest.raises(DataError, match="more than a table of sentence pairs may have"):
        load_corpus(f"{path}?src=c0&tgt=c1")


@pytest.mark.parametrize(
    ("name", "text"), [("deep.json", "[" * 100_000), ("deep.jsonl", '{"a":' * 5000 + "1" + "}" * 5000)]
)
def test_json_nested_too_deeply_gets_one_message(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="nests its JSON too deeply to read; write one flat record per line"):
        table_columns(path)


def test_a_table_of_a_few_columns_reads_as_before(tmp_path):
    path = tmp_path / "ok.jsonl"
    path.write_text("".join(json.dumps({"en": f"a {i}", "fr": f"b {i}", "t": {"x": "y"}}) + "\n" for i in range(9)))
    assert table_columns(path) == ["en", "fr", "t.x"]
    assert corpora.MAX_COLUMNS == 1000
