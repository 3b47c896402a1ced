"""CSV safety: a cell a spreadsheet would run as a formula is quoted, numbers stay numbers."""

from __future__ import annotations

import io

import pandas as pd

from attnviz.store import csv_text, safe_cell


def test_the_csv_guard_also_quotes_a_formula_behind_leading_spaces():
    assert safe_cell("  =1+1") == "'  =1+1" and safe_cell(" @SUM(1)") == "' @SUM(1)"
    assert safe_cell("a = b") == "a = b" and safe_cell("la maison") == "la maison"


def test_text_cells_and_column_names_are_quoted_and_numbers_kept():
    frame = pd.DataFrame({"=name": ["+cmd", "ok"], "value": [-1.5, 2.0]})
    back = pd.read_csv(io.StringIO(csv_text(frame)))
    assert list(back.columns) == ["'=name", "value"]
    assert back["'=name"].tolist() == ["'+cmd", "ok"] and back["value"].tolist() == [-1.5, 2.0]
