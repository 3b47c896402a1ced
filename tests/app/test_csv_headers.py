"""Every CSV the app writes, and every table it shows (whose toolbar downloads it as CSV), names
each column once when the sentence repeats a word: Explore's Export (one style and Both), the
math panel's vectors, Explore's other views, Compare and Data (AppTest, tiny toy-fr models)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from attnviz.explain import cell_numbers
from attnviz.store.checkpoint import load_checkpoint
from tests.support.app import start

REPEATS = "the cat sees the cat ."  # "the" and "cat" twice each
VIEWS = ["Attribution", "Beam search", "What-if"]  # the views that open on a table


def headers(at, media: dict) -> dict[str, list[str]]:
    """The header row of every CSV the page's download buttons send, by file name."""
    out = {}
    for button in at.get("download_button"):
        saved = media.get(Path(button.proto.url).stem)
        if saved is not None and (saved[1] or "").endswith(".csv"):
            out[saved[1]] = next(csv.reader(io.StringIO(saved[0].decode("utf-8-sig"))))
    return out


def table_columns(at) -> list[list[str]]:
    return [list(map(str, t.value.columns)) for t in [*at.dataframe, *at.table]]


def once_each(names: list[str]) -> bool:
    return len(set(names)) == len(names)


@pytest.mark.parametrize("style", ["luong", "both"])
def test_export_csvs_name_each_source_column_once(app_env, media, style):
    at = start(explore_text=REPEATS, explore_style=style, explore_view="Export")
    assert not at.exception, at.exception
    found = headers(at, media)
    matrices = [h for name, h in found.items() if name.endswith(("weights.csv", "scores.csv"))]
    assert len(matrices) == (4 if style == "both" else 2)
    for header in found.values():
        assert once_each(header), header
    for header in matrices:  # one column per source position, the repeated words apart
        assert header[2:] == ["0:the", "1:cat", "2:sees", "3:the", "4:cat", "5:.", "6:<eos>"]


def test_the_math_panels_csv_names_each_column_once(app_env):
    tr = load_checkpoint(app_env / "toyfr-general-luong.safetensors")
    al = tr.translate(REPEATS)
    for s in (0, 3):  # both "the"
        header = next(csv.reader(io.StringIO(cell_numbers(tr, al, 0, s).to_csv().removeprefix("\ufeff"))))
        assert header == ["t", "s", "target_token", "source_token", "line", "label", "index", "word", "value"]


@pytest.mark.parametrize("view", VIEWS)
def test_explore_tables_name_each_column_once(app_env, view):
    state = {"explore_style": "both", "explore_view": view, "explore_beam": 3, "explore_replace_word": "dog"}
    at = start(explore_text=REPEATS, **state)
    assert not at.exception, at.exception
    tables = table_columns(at)
    assert tables, f"{view} shows a table"
    assert all(once_each(columns) for columns in tables), tables


@pytest.mark.parametrize("page", ["compare.py", "data.py"])
def test_compare_and_data_tables_name_each_column_once(app_env, page):
    at = start(explore_text=REPEATS)
    at.switch_page(f"attnviz_app/app_pages/{page}").run()
    assert not at.exception, at.exception
    tables = table_columns(at)
    assert tables and all(once_each(columns) for columns in tables), tables
