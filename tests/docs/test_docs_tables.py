"""The docs' tables and limits held to the code: the app's pages as frame.py routes them, the score
functions as the registry holds them (the library's table, the README's and the app docs' count), and
the project's rule that no source file is over 400 lines."""

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


def test_the_readme_and_the_app_docs_count_and_name_the_registered_scores():
    from attnviz.model import SCORES

    words = {6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten", 11: "eleven", 12: "twelve"}
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    count, names = re.search(r"one of (\w+) score functions \(([^)]+)\)", readme).groups()
    listed = sorted(name.strip().replace(" ", "_").replace("-", "_") for name in names.split(","))
    assert listed == sorted(SCORES) and count == words.get(len(SCORES)), "README.md's first paragraph lists them"
    app = " ".join((ROOT / "docs" / "app.md").read_text(encoding="utf-8").split())
    assert f"(any of the {words.get(len(SCORES))};" in app, "docs/app.md's Sidebar paragraph counts them"


@pytest.mark.parametrize("path", [*SOURCES, ROOT / "app.py"], ids=lambda p: str(p.relative_to(ROOT)))
def test_no_source_file_is_over_400_lines(path):
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)} has {lines} lines; split it by role"
