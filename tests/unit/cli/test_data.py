"""The ``data`` command: pairs as JSON lines with their links, the summary, bad arguments; pairs
dropped from a file are reported (by ``train`` too)."""

from __future__ import annotations

import argparse
import io
import json
import shlex

import pytest

from attnviz.cli.data import add_arguments, run
from attnviz.errors import ConfigError
from tests.support.cli import run as run_cli
from tests.support.tables import PAIRS


def test_the_cli_reports_dropped_pairs(tmp_path, capsys, monkeypatch):
    from attnviz.cli.main import main

    monkeypatch.setenv("ATTNVIZ_MODELS", str(tmp_path / "models"))
    path = tmp_path / "pairs.tsv"
    long_row = (" ".join(["wort"] * 2500), "a long one")
    path.write_text("de\ten\n" + "".join(f"{d}\t{e}\n" for d, e in [*PAIRS, long_row]), encoding="utf-8")
    code = main(["data", f"{path}?src=de&tgt=en", "--summary"])
    out, err = capsys.readouterr()
    assert code == 0 and "dropped 1 pair" in err and "dropped 1 pair" in out
    tiny = shlex.split("--quiet --epochs 1 --emb 8 --hidden 8 --attn 8 --batch 32")
    code = main(["train", "--data", f"{path}?src=de&tgt=en", *tiny])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "note:" in err and "dropped 1 pair" in err


def cli(*argv: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    out = io.StringIO()
    code = run(parser.parse_args(list(argv)), out=out)
    return code, out.getvalue()


def test_cli_prints_json_lines():
    code, text = cli("--task", "toy-fr", "--n", "3", "--json")
    lines = [json.loads(line) for line in text.splitlines()]
    assert code == 0 and len(lines) == 3
    assert set(lines[0]) == {"source", "target", "source_tokens", "target_tokens", "sure", "possible"}
    i, j = lines[0]["sure"][0]
    assert 0 <= i < len(lines[0]["source_tokens"]) and 0 <= j < len(lines[0]["target_tokens"])
    assert (
        cli("dates", "--split", "train", "--n", "2", "--seed", "4")[1]
        == cli("--task", "dates", "--split", "train", "--n", "2", "--seed", "4")[1]
    )


def test_cli_summary_and_errors():
    code, text = cli("sort", "--summary")
    assert code == 0 and json.loads(text)["pairs"] == {"train": 5000, "valid": 500, "test": 500}
    with pytest.raises(ConfigError, match="name the data"):
        cli("--json")
    with pytest.raises(ConfigError, match="--n"):
        cli("copy", "--n", "-1")


def test_data_command_prints_pairs_with_links(capsys):
    code, out, _ = run_cli(capsys, "data", "--task", "reverse", "--split", "test", "--n", "3", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(rows) == 3
    for row in rows:
        n = len(row["source_tokens"])
        assert sorted(row["sure"]) == sorted([i, n - 1 - i] for i in range(n))
