"""``attnviz attention`` reads its files one at a time: the matrices of a file are dropped once its
links are taken, a listing prints each file's rows as it is read, and a malformed file stops it there
with one line naming the file (after the rows of the files before it)."""

from __future__ import annotations

import gc
import json
import sys
import weakref

import pytest

from attnviz.cli import attention
from attnviz.external import EXAMPLE_ATTENTION
from tests.support.cli import run


@pytest.fixture
def files(tmp_path):
    paths = []
    for k in range(5):
        paths.append(str(tmp_path / f"s{k}.json"))
        (tmp_path / f"s{k}.json").write_text(json.dumps(EXAMPLE_ATTENTION), encoding="utf-8")
    (tmp_path / "gold.txt").write_text("0-0 1-2 2-1\n" * 5, encoding="utf-8")
    return paths


@pytest.mark.parametrize(
    "extra", [[], ["--json"], ["--gold", "gold.txt"], ["--gold", "gold.txt", "--json"], ["--matrix", "layer 0 head 1"]]
)
def test_one_file_in_memory_at_a_time(capsys, files, extra, monkeypatch):
    monkeypatch.chdir(files[0].rsplit("/", 1)[0])
    read, refs = attention.read_attention_file, []
    held = []  # how many files were still in memory as each one was read

    def counted(path):
        gc.collect()  # what cycles still hold is not held
        held.append(sum(r() is not None for r in refs))
        f = read(path)
        refs.append(weakref.ref(f))
        return f

    code, expected, _ = run(capsys, "attention", *files, *extra)
    monkeypatch.setattr(attention, "read_attention_file", counted)
    code, out, err = run(capsys, "attention", *files, *extra)
    assert code == 0 and err == "" and out == expected
    assert len(held) == 5 and max(held) <= 1  # the file before, at most: not every file read so far


def test_a_malformed_file_stops_the_listing_there_in_one_line(capsys, files, monkeypatch):
    with open(files[2], "w", encoding="utf-8") as f:
        f.write('{"weights": [[0.5, 0.5]]}')
    for watched in (False, True):
        monkeypatch.setattr(sys.stderr, "isatty", lambda watched=watched: watched)
        code, out, err = run(capsys, "attention", *files)
        assert code == 2 and out.count("s0.json") == 2 and out.count("s1.json") == 2 and "s3.json" not in out
        last = err.replace("\r", "\n").splitlines()[-1]
        assert last.startswith("attnviz attention: error: ") and "s2.json" in last
        assert ("files/s" in err) == watched and err.count("error") == 1
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    code, out, err = run(capsys, "attention", *files, "--gold", files[0].rsplit("/", 1)[0] + "/gold.txt")
    assert code == 2 and out == "" and err.count("\n") == 1 and "s2.json" in err
