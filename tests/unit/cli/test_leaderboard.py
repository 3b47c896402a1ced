"""``attnviz leaderboard``: the shipped models' manifest as a table or JSON, or written between the markers
of a Markdown file (refused, the file left alone, where it has no markers or is not UTF-8); without a
manifest, an error."""

from __future__ import annotations

import json

import pytest

from attnviz.store import read_manifest
from tests.support.cli import run


@pytest.mark.parametrize("flags", [[], ["--json"], ["--write", "README.md"]])
def test_no_manifest_is_an_error_not_an_empty_table(capsys, tmp_path, monkeypatch, flags):
    """A mistyped ATTNVIZ_PRETRAINED or a folder without its manifest is exit 2 with a message, not
    ``[]`` with exit 0, and --write leaves the file's table as it was."""
    readme = tmp_path / "README.md"
    readme.write_text("<!-- leaderboard:begin -->\n| old |\n<!-- leaderboard:end -->\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for folder in (tmp_path / "no-such-folder", tmp_path):
        monkeypatch.setenv("ATTNVIZ_PRETRAINED", str(folder))
        code, out, err = run(capsys, "leaderboard", *flags)
        assert code == 2 and out == "" and "manifest.json does not exist" in err and "ATTNVIZ_PRETRAINED" in err
    assert readme.read_text(encoding="utf-8").count("| old |") == 1


BEGIN, END = "<!-- leaderboard:begin -->", "<!-- leaderboard:end -->"


def test_the_table_has_a_row_per_shipped_model(capsys):
    manifest = read_manifest()
    code, out, err = run(capsys, "leaderboard")
    assert code == 0 and not err
    lines = out.strip().splitlines()
    assert lines[0].startswith("| ") and lines[1].startswith("|---|")
    assert len(lines) == 2 + len(manifest)
    assert all(f"`{entry['name']}`" in out for entry in manifest)


def test_json_prints_the_manifests_entries(capsys):
    code, out, err = run(capsys, "leaderboard", "--json")
    assert code == 0 and not err
    assert json.loads(out) == read_manifest()


def test_write_puts_the_table_between_the_markers_and_keeps_the_rest(capsys, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# Models\n\nbefore\n{BEGIN}\n| old |\n{END}\nafter\n", encoding="utf-8")
    code, out, _ = run(capsys, "leaderboard", "--write", str(readme))
    assert code == 0 and out.strip() == f"{readme} updated"
    _, table, _ = run(capsys, "leaderboard")
    assert readme.read_text(encoding="utf-8") == f"# Models\n\nbefore\n{BEGIN}\n{table.strip()}\n{END}\nafter\n"
    code, out, _ = run(capsys, "leaderboard", "--write", str(readme))
    assert code == 0 and out.strip() == f"{readme} already up to date"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"# Models\n\nno markers here\n", f"has no {BEGIN} ... {END} markers to put the leaderboard between"),
        (f"caf\xe9\n{BEGIN}\n{END}\n".encode("latin-1"), "is not UTF-8 text (invalid continuation byte at byte 3)"),
    ],
)
def test_write_to_a_file_it_cannot_update_is_one_line_and_leaves_it_alone(capsys, tmp_path, content, message):
    readme = tmp_path / "README.md"
    readme.write_bytes(content)
    code, out, err = run(capsys, "leaderboard", "--write", str(readme))
    assert code == 2 and not out and len(err.strip().splitlines()) == 1 and message in err, err
    assert readme.read_bytes() == content
