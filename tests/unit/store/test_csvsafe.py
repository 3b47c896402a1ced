"""CSV safety: a cell a spreadsheet would run as a formula is quoted, numbers stay numbers."""

from __future__ import annotations

import io

import pandas as pd

from attnviz.store import csv_text, safe_cell
from attnviz.store.csvsafe import unique_names


def test_the_csv_guard_also_quotes_a_formula_behind_leading_spaces():
    assert safe_cell("  =1+1") == "'  =1+1" and safe_cell(" @SUM(1)") == "' @SUM(1)"
    assert safe_cell("a = b") == "a = b" and safe_cell("la maison") == "la maison"


def test_text_cells_and_column_names_are_quoted_and_numbers_kept():
    frame = pd.DataFrame({"=name": ["+cmd", "ok"], "value": [-1.5, 2.0]})
    back = pd.read_csv(io.StringIO(csv_text(frame)))
    assert list(back.columns) == ["'=name", "value"]
    assert back["'=name"].tolist() == ["'+cmd", "ok"] and back["value"].tolist() == [-1.5, 2.0]


def test_a_name_met_again_is_numbered_so_each_column_is_named_once():
    frame = pd.DataFrame([[1, 2, 3, 4]], columns=["the", "cat", "the", "the (2)"])
    text = csv_text(frame)
    assert text.startswith("\ufeff")  # a spreadsheet reads the file as UTF-8
    header = text.removeprefix("\ufeff").splitlines()[0].split(",")
    assert header == ["the", "cat", "the (3)", "the (2)"]  # a number another column has is skipped
    back = pd.read_csv(io.StringIO(csv_text(frame)))
    assert list(back.columns) == header and back.iloc[0].tolist() == [1, 2, 3, 4]
    assert unique_names(["=a", 0, "0"]) == ["=a", "0", "0 (2)"]
