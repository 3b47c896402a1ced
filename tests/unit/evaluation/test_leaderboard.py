"""The leaderboard in docs/models.md is the manifest's, and so is the count of models the docs give."""

import os
import re

import pytest

from attnviz.errors import ConfigError
from attnviz.evaluation import leaderboard
from attnviz.store import catalog, checkout_dir

ENTRIES = catalog.read_manifest()
pytestmark = pytest.mark.skipif(not ENTRIES, reason="no shipped models (pretrained/manifest.json)")


def written_table(path) -> str:
    """The table between the markers of ``path``."""
    text = path.read_text(encoding="utf-8")
    return text.split(leaderboard.BEGIN, 1)[1].split(leaderboard.END, 1)[0].strip() if leaderboard.BEGIN in text else ""


def test_docs_leaderboard_matches_the_manifest():
    assert written_table(checkout_dir() / "docs" / "models.md") == leaderboard.leaderboard_markdown()


def test_the_docs_count_the_shipped_models_as_the_manifest_does():
    said = {
        "README.md": r"it ships (\d+) trained models",
        "docs/models.md": r"holds (\d+) trained models",
    }
    for name, pattern in said.items():
        text = (checkout_dir() / name).read_text(encoding="utf-8")
        assert [int(n) for n in re.findall(pattern, text)] == [len(ENTRIES)], name


def test_writing_the_table_keeps_the_rest_of_the_file_byte_for_byte(tmp_path):
    path = tmp_path / "models.md"
    before = (
        b"# Models\r\n\r\nintro\ra line\r\n<!-- leaderboard:begin -->\r\nold\r\n<!-- leaderboard:end -->\r\ntail\r\n"
    )
    path.write_bytes(before)
    assert leaderboard.write_table(path)
    after = path.read_bytes()
    assert after.startswith(b"# Models\r\n\r\nintro\ra line\r\n<!-- leaderboard:begin -->\r\n| model |")
    assert after.endswith(b"|\r\n<!-- leaderboard:end -->\r\ntail\r\n") and b"old" not in after
    assert b"\n" not in after.replace(b"\r\n", b"")  # every line of the table ends as the file's do
    assert not leaderboard.write_table(path)  # written again: nothing changes


def test_a_failed_write_leaves_the_file_whole(tmp_path, monkeypatch):
    import os

    path = tmp_path / "models.md"
    path.write_text("x\n<!-- leaderboard:begin -->\nold\n<!-- leaderboard:end -->\n", encoding="utf-8")
    before = path.read_bytes()

    def disk_full(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)
    with pytest.raises(OSError, match="No space left"):
        leaderboard.write_table(path)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["models.md"]


def test_a_file_it_cannot_update_is_refused_with_a_message(tmp_path):
    latin = tmp_path / "latin.md"
    latin.write_bytes(b"caf\xe9\n<!-- leaderboard:begin -->\n<!-- leaderboard:end -->\n")
    with pytest.raises(ConfigError, match=r"is not UTF-8 text .*; convert it to UTF-8"):
        leaderboard.write_table(latin)
    fifo = tmp_path / "fifo.md"
    os.mkfifo(fifo)  # would block a reader for ever
    for wrong in (fifo, tmp_path, tmp_path / "missing.md"):
        with pytest.raises(ConfigError, match="is not a Markdown file"):
            leaderboard.write_table(wrong)


def test_outside_a_checkout_the_attribution_results_are_read_from_the_package(monkeypatch):
    monkeypatch.setattr(leaderboard, "checkout_dir", lambda: None)
    path = leaderboard.attribution_results_path()
    assert path is not None and path.parent.name == "evaluation" and path.is_file()
    assert leaderboard.attribution_records(path)  # the Evaluate page's table has rows from a wheel
