"""``attnviz leaderboard``: the shipped models' manifest as a table or JSON; without a manifest, an error."""

from __future__ import annotations

import pytest

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
