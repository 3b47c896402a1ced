"""The leaderboard in docs/models.md is the manifest's, and so is the count of models the docs give."""

import re

import pytest

from attnviz.evaluation import leaderboard
from attnviz.store import catalog, checkout_dir

ENTRIES = catalog.read_manifest()
pytestmark = pytest.mark.skipif(not ENTRIES, reason="no shipped models (pretrained/manifest.json)")


def test_docs_leaderboard_matches_the_manifest():
    assert leaderboard.written_table(checkout_dir() / "docs" / "models.md") == leaderboard.leaderboard_markdown()


def test_the_docs_count_the_shipped_models_as_the_manifest_does():
    said = {
        "README.md": r"it ships (\d+) trained models",
        "docs/models.md": r"holds (\d+) trained models",
    }
    for name, pattern in said.items():
        text = (checkout_dir() / name).read_text(encoding="utf-8")
        assert [int(n) for n in re.findall(pattern, text)] == [len(ENTRIES)], name
