"""docs/results.md's Hansards table of every en-fr model, plain and adapted, against every method is
``python benchmarks/hansards.py --pivot``'s output from the stored figures, byte for byte. Reads
files only: no model runs."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from tests.support.paths import ROOT

RESULTS = ROOT / "benchmarks" / "results" / "hansards.json"
DOCS = ROOT / "docs" / "results.md"
COMMAND = "python benchmarks/hansards.py --pivot"


@pytest.fixture(scope="module")
def hansards():
    spec = importlib.util.spec_from_file_location("hansards_benchmark", ROOT / "benchmarks" / "hansards.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def docs_pivot() -> tuple[str, str]:
    """The pivot table of docs/results.md and the text before it."""
    text = DOCS.read_text(encoding="utf-8")
    start = text.index("| en-fr model | |")
    end = text.find("\n\n", start)
    return text[start : end + 1], text[:start]


def test_the_docs_pivot_table_is_the_benchmarks_pivot_of_the_stored_figures(hansards):
    table, _ = docs_pivot()
    assert hansards.pivot(json.loads(RESULTS.read_text(encoding="utf-8"))) == table


def test_the_docs_state_the_command_beside_the_table(hansards, monkeypatch, capsys):
    table, before = docs_pivot()
    assert COMMAND in before[before.rindex("```bash") :]  # in the code block just above the table
    monkeypatch.setattr(sys, "argv", COMMAND.split()[1:])
    hansards.main()
    assert capsys.readouterr().out == table


def test_two_runs_that_share_a_row_are_refused(hansards):
    results = json.loads(RESULTS.read_text(encoding="utf-8"))
    entry = results["attention"]["multi30k-en-fr-dot-luong adapted 200"]
    results["attention"]["multi30k-en-fr-dot-luong adapted 50"] = entry
    with pytest.raises(ValueError, match="keep one"):
        hansards.pivot(results)
