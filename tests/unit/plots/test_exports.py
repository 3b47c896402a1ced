"""Exports: CSV cells a spreadsheet would run are quoted, the matrix CSV has a row per target step,
changed steps and replaced words."""

from __future__ import annotations

import io

import pandas as pd

from attnviz.plots.exports import changed_steps, matrix_csv, replace_token
from attnviz.store.checkpoint import load_checkpoint


def test_export_helpers():
    assert changed_steps(["a", "b", "<eos>"], ["a", "c", "<eos>", "x"]) == [1, 3]
    assert replace_token(["the", "cat", "."], 1, "dog", char_level=False) == "the dog ."
    assert replace_token(list("12 may"), 0, "3", char_level=True) == "32 may"
    pieces = ["ein", "orange@@", "farbenen", "hut"]
    assert replace_token(pieces, 1, "rot", char_level=False) == "ein rotfarbenen hut"
    assert replace_token(pieces, 3, "ball", char_level=False) == "ein orangefarbenen ball"


def test_csv_rows_are_target_steps(app_models_dir):
    tr = load_checkpoint(app_models_dir / "toyfr-localp-luong.safetensors")
    al = tr.translate("=cmd the cat .")
    frame = pd.read_csv(io.StringIO(matrix_csv(al, "scores")))
    assert len(frame) == len(al.target_tokens)
    assert frame.columns[2].startswith("'=")  # no spreadsheet formula


def test_the_csv_guard_also_quotes_a_formula_behind_leading_spaces():
    from attnviz.plots.exports import safe_cell

    assert safe_cell("  =1+1") == "'  =1+1" and safe_cell(" @SUM(1)") == "' @SUM(1)"
    assert safe_cell("a = b") == "a = b" and safe_cell("la maison") == "la maison"
