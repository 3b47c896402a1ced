"""What an attribution's quiet parts mean: a pale <eos> row and IG deltas near 0 are said in words."""

from __future__ import annotations

import numpy as np

from attnviz.explain import MAX_STEPS, eos_note
from attnviz.explain.attribution import _agreement
from attnviz.explain.attribution_notes import delta_note
from tests.support.alignments import make_alignment


def attribution(values: np.ndarray, delta: np.ndarray | None, method: str = "ig", steps: int = 32):
    al = make_alignment(["ein", "mann", "."], ["a", "man", "."], seed=7)
    log_probs = np.log(np.array([0.9, 0.8, 0.95, 0.93]))  # [tgt]; the last is <eos>
    return _agreement(method, steps, "zeros", al, values, log_probs, delta)


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


def test_a_delta_left_at_the_most_steps_says_so_instead_of_asking_for_more():
    values, delta = np.ones((4, 4)), np.array([0.0, 8.9, -0.05, 0.0])
    fewer = delta_note(attribution(values, delta, steps=32))
    assert "more quadrature steps (up to 512)" in fewer and "8.9" in fewer
    most = delta_note(attribution(values, delta, steps=MAX_STEPS))
    assert "more quadrature steps" not in most and f"even {MAX_STEPS} quadrature steps leave it" in most
    assert "occlusion" in most
    assert attribution(values, delta, steps=64).steps == 64 and attribution(values, None, "gxi").steps is None
