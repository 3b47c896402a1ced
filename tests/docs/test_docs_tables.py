"""The docs' tables and limits held to the code: the app's pages as frame.py routes them, the score
functions as the registry holds them, and the project's rule that no source file is over 400 lines."""

import re

import pytest

from tests.support.paths import ROOT

MAX_LINES = 400
SOURCES = sorted(
    path
    for folder in ("attnviz", "attnviz_app", "tests", "benchmarks", "pretrained", ".ci")
    for path in (ROOT / folder).rglob("*.py")
    if "__pycache__" not in path.parts
)


def test_the_docs_table_of_pages_is_the_navigation_in_its_order():
    frame = (ROOT / "attnviz_app" / "frame.py").read_text(encoding="utf-8")
    pages = re.findall(r'title="([^"]+)",\s*icon="[^"]+",\s*url_path="([^"]+)"', frame)
    docs = (ROOT / "docs" / "app.md").read_text(encoding="utf-8")
    table = re.findall(r"^\| \[([^\]]+)\]\(#[a-z-]+\) \| `/([a-z]*)` \|", docs, re.M)
    assert len(pages) == 7 and table == [(title, "" if path == "front" else path) for title, path in pages]


def test_the_docs_table_of_score_functions_is_the_registry():
    from attnviz.model import SCORES

    docs = (ROOT / "docs" / "library.md").read_text(encoding="utf-8")
    section = docs.split("## Score functions", 1)[1].split("\n## ", 1)[0]
    table = re.findall(r"^\| `([a-z_]+)` \|", section, re.M)
    assert sorted(table) == sorted(SCORES), "add a row for each registered score to docs/library.md's table"


@pytest.mark.parametrize("path", [*SOURCES, ROOT / "app.py"], ids=lambda p: str(p.relative_to(ROOT)))
def test_no_source_file_is_over_400_lines(path):
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)} has {lines} lines; split it by role"
