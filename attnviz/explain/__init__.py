"""Explanations beside attention: gradient attributions, the arithmetic of one cell, worked examples."""

from attnviz.explain.attribution import BASELINES, MAX_SOURCE_TOKENS, MAX_STEPS, METHODS, Attribution, attribute
from attnviz.explain.attribution_notes import delta_note, eos_note
from attnviz.explain.cellmath import CellMath, cell_numbers, latex_lines
from attnviz.explain.worked import (
    WorkedExample,
    all_scores,
    default_parameters,
    parameter_rows,
    parse_vector,
    score_doc,
    score_formula,
    score_parameters,
    score_reading,
    worked_example,
    worked_lines,
)

__all__ = [
    "BASELINES",
    "MAX_SOURCE_TOKENS",
    "MAX_STEPS",
    "METHODS",
    "Attribution",
    "CellMath",
    "WorkedExample",
    "all_scores",
    "attribute",
    "cell_numbers",
    "default_parameters",
    "delta_note",
    "eos_note",
    "latex_lines",
    "parameter_rows",
    "parse_vector",
    "score_doc",
    "score_formula",
    "score_parameters",
    "score_reading",
    "worked_example",
    "worked_lines",
]
