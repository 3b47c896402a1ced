"""What an attribution's quiet parts mean: a pale <eos> row and IG deltas near 0 are said in words."""

from __future__ import annotations

import numpy as np

from attnviz.explain import eos_note
from attnviz.explain.attribution import _agreement
from attnviz.explain.attribution_notes import delta_note
from tests.support.alignments import make_alignment


def attribution(values: np.ndarray, delta: np.ndarray | None, method: str = "ig"):
    al = make_alignment(["ein", "mann", "."], ["a", "man", "."], seed=7)
    log_probs = np.log(np.array([0.9, 0.8, 0.95, 0.93]))  # [tgt]; the last is <eos>
    return _agreement(method, 32, "zeros", al, values, log_probs, delta)


def test_a_pale_eos_row_is_explained_with_its_numbers():
    values = np.array([[2.0, -1.0, 0.1, 0.0], [0.3, 3.6, 0.2, 0.0], [0.1, 0.2, 1.5, 0.0], [0.01, -0.02, 0.09, 0.0]])
    note = eos_note(attribution(values, None, "gxi"))
    assert "<eos> row is nearly blank" in note and "after “.”" in note and "p = 0.93" in note
    assert "0.09" in note and "3.6" in note
    values[-1] = [1.0, 0.5, 0.2, 0.0]  # a row as strong as the others: nothing to explain
    assert eos_note(attribution(values, None, "gxi")) == ""


def test_ig_deltas_near_zero_say_completeness_holds():
    values = np.ones((4, 4))
    assert "at most 3.3e-06" in delta_note(attribution(values, np.array([1e-6, -3.3e-6, 0.0, 2e-7])))
    assert "completeness" in delta_note(attribution(values, np.zeros(4)))
    assert "more quadrature steps" in delta_note(attribution(values, np.array([0.0, 0.2, -0.05, 0.0])))
    assert delta_note(attribution(values, None, "occlusion")) == ""
