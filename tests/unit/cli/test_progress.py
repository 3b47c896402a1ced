"""The corpus commands count what they have done on standard error where a person watches it (a
terminal) and the results go elsewhere: ``align-eval`` its pairs, ``attention`` its files. Nothing of it
where standard error is a file, and standard output is the same either way."""

from __future__ import annotations

import json
import sys

import pytest

from attnviz.links import extract
from attnviz.store.checkpoint import save
from tests.support.cli import run

SOURCES = ["a b c d", "e f g", "h a b", "c d e f g"]


@pytest.fixture
def bitext(trained, tmp_path, monkeypatch):
    save(trained, tmp_path / "models" / "rev.safetensors")
    monkeypatch.setenv("ATTNVIZ_MODELS", str(tmp_path / "models"))
    monkeypatch.chdir(tmp_path)
    lines = [f"{s} ||| {' '.join(reversed(s.split()))}\n" for s in SOURCES]
    (tmp_path / "text.a-b").write_text("".join(lines), encoding="utf-8")
    (tmp_path / "gold.txt").write_text("0-0 1-1\n0-2\n1-1\n0-4 4-0\n", encoding="utf-8")
    return tmp_path


def test_align_eval_counts_its_pairs_where_a_person_watches(capsys, bitext, monkeypatch):
    monkeypatch.setattr(extract, "CORPUS_CHUNK", 2)  # two batches of pairs
    command = ("align-eval", "--model", "rev", "--bitext", "text.a-b", "--gold", "gold.txt", "--base", "0")
    code, plain, err = run(capsys, *command)
    assert code == 0 and "pairs/s" not in err  # stderr a file: no count
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, out, err = run(capsys, *command)
    assert code == 0 and out == plain
    assert "0/4" in err and "4/4" in err and "pairs/s" in err  # the share done, then all of them
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)  # the scores on the terminal too: no count
    code, out, err = run(capsys, *command)
    assert code == 0 and out == plain and "pairs/s" not in err


def test_attention_counts_its_files_where_a_person_watches(capsys, tmp_path, monkeypatch):
    from attnviz.external import EXAMPLE_ATTENTION

    paths = []
    for k in range(3):
        paths.append(tmp_path / f"s{k}.json")
        paths[-1].write_text(json.dumps(EXAMPLE_ATTENTION), encoding="utf-8")
    (tmp_path / "gold.txt").write_text("0-0 1-2 2-1\n" * 3, encoding="utf-8")
    for extra in ([], ["--gold", str(tmp_path / "gold.txt")]):
        code, plain, err = run(capsys, "attention", *map(str, paths), *extra)
        assert code == 0 and err == ""
        with monkeypatch.context() as m:
            m.setattr(sys.stderr, "isatty", lambda: True)
            code, out, err = run(capsys, "attention", *map(str, paths), *extra)
        assert code == 0 and out == plain and "3/3" in err and "files/s" in err


def test_adaptation_counts_its_steps_where_a_person_watches(capsys, bitext, monkeypatch):
    command = ("align-eval", "--model", "rev", "--bitext", "text.a-b", "--gold", "gold.txt", "--base", "0")
    command += ("--adapt", "3", "--adapt-batch", "2")
    code, plain, err = run(capsys, *command)
    assert code == 0 and "steps/s" not in err and "adapted a copy" in err  # stderr a file: no count
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, out, err = run(capsys, *command)
    assert code == 0 and out == plain
    assert "0/3" in err and "3/3" in err and "steps/s" in err and "loss=" in err
