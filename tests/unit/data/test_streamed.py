"""The streamed summary of a local table (``attnviz data --summary``): read a chunk of rows at a
time, it gives exactly the summary of the whole corpus in memory (the same empty-row, length and
duplicate filters, the same seeded cut, the same numbers and notes); the file's checks read it in
chunks too. benchmarks/data_summary.py measures the memory this saves on a large file."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from attnviz.data import corpora, load_corpus, streamed, summarize, summarize_spec
from attnviz.errors import DataError


def write_table(path, rows: int = 12_000, seed: int = 0, sep: str = ",") -> str:
    """A few MB of pairs with what the filters look for: repeats, empty sides, long rows, case,
    quoted separators, accents and a literal special token."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(3000)] + ["Été", "ÇA", "<unk>", "naïve"]
    lines = ["en,fr" if sep == "," else "en\tfr"]
    for i in range(rows):
        if i % 997 == 5:
            lines.append(lines[-1])  # a repeat
            continue
        src = " ".join(rng.choices(words, k=rng.randint(1, 30)))
        tgt = " ".join(rng.choices(words, k=rng.randint(1, 30)))
        if i % 1499 == 7:
            src = ""  # an empty side
        if sep == "," and i % 500 == 3:
            src = f'"{src}, with a comma"'
        lines.append(f"{src}{sep}{tgt}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f"{path}?src=en&tgt=fr"


@pytest.mark.parametrize("name", ["pairs.csv", "pairs.tsv"])
def test_the_streamed_summary_is_the_summary_of_the_whole_corpus(tmp_path, monkeypatch, name):
    spec = write_table(tmp_path / name, sep="," if name.endswith("csv") else "\t")
    sizes = []
    read_rows = corpora.read_rows

    def spy(records, *args, **kwargs):
        sizes.append(len(records))
        return read_rows(records, *args, **kwargs)

    monkeypatch.setattr(corpora, "read_rows", spy)
    for seed, max_len in ((0, None), (3, 20)):
        sizes.clear()
        streamed_summary = summarize_spec(spec, seed=seed, max_len=max_len, chunk_rows=1_000)
        assert len(sizes) > 10 and max(sizes) == 1_000  # read a chunk at a time
        whole = summarize(load_corpus(spec, seed=seed, max_len=max_len))
        assert streamed_summary == whole
    notes = " ".join(whole["notes"])
    assert "rows with an empty side (line" in notes and ", ..." in notes
    assert "duplicate pairs" in notes and "outside 1..20 tokens" in notes


def test_other_specs_are_summarized_from_their_corpus():
    assert summarize_spec("toy-fr", seed=1) == summarize(load_corpus("toy-fr", seed=1))
    assert not streamed.is_table_spec("multi30k-de-en") and streamed.is_table_spec("pairs.tsv?src=a&tgt=b")


def test_bad_tables_are_refused_as_the_loader_refuses_them(tmp_path, monkeypatch):
    monkeypatch.setattr(corpora, "CHUNK_BYTES", 64)  # the UTF-8 check's chunks end inside lines
    cases = {
        "empty.csv": "en,fr\n",
        "blank.csv": "en,fr\n,a\nb,\n",
        "extra.csv": "en,fr\na,b\nc,d,note\n",
        "latin.csv": "en,fr\n" + "a long enough line of words,with its pair\n" * 3 + "caf\xe9,x\n",
    }
    for name, text in cases.items():
        path = tmp_path / name
        path.write_bytes(text.encode("latin-1"))
        spec = f"{path}?src=en&tgt=fr"
        with pytest.raises(DataError) as whole:
            load_corpus(spec)
        with pytest.raises(DataError) as chunked:
            summarize_spec(spec)
        assert str(chunked.value) == str(whole.value), name
    assert "line 5, column 4: byte 0xe9 is not UTF-8" in str(whole.value)


def test_data_summary_prints_the_streamed_summary(tmp_path):
    spec = write_table(tmp_path / "pairs.csv", rows=3_000)
    done = subprocess.run([sys.executable, "-m", "attnviz", "data", "--summary", spec], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == summarize(load_corpus(spec))
    assert "note: " in done.stderr and "Traceback" not in done.stderr
