"""``attnviz attention`` writes a matrix's name from the file as a literal when it holds control or
direction characters: a name cannot clear the terminal, set its title or add an output line."""

from __future__ import annotations

import copy
import json

from attnviz.external import EXAMPLE_ATTENTION
from tests.support.cli import run

HOSTILE = "head\x1b]0;owned\x07\nsecond line\u202e"


def test_matrix_names_with_escapes_are_written_as_literals(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    example = copy.deepcopy(EXAMPLE_ATTENTION)
    example["matrices"][0]["name"] = HOSTILE
    (tmp_path / "a.json").write_text(json.dumps(example), encoding="utf-8")
    code, out, err = run(capsys, "attention", "a.json")
    assert code == 0, err
    assert len(out.strip().splitlines()) == 2  # one line a matrix
    assert ascii(HOSTILE) in out and "\x1b" not in out and "\u202e" not in out
