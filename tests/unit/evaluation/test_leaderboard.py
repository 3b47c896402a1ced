"""The leaderboard in docs/models.md is the manifest's."""

import pytest

from attnviz.evaluation import leaderboard
from attnviz.store import catalog, checkout_dir

ENTRIES = catalog.read_manifest()
pytestmark = pytest.mark.skipif(not ENTRIES, reason="no shipped models (pretrained/manifest.json)")


def test_docs_leaderboard_matches_the_manifest():
    assert leaderboard.written_table(checkout_dir() / "docs" / "models.md") == leaderboard.leaderboard_markdown()
