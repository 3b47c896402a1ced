"""The cell panel's note when Explore hides <eos>: how the map's weight comes from the model's own,
for a softmax row (rescaled to sum to 1) and a local-p row (rescaled to keep its total)."""

from __future__ import annotations

import numpy as np

from attnviz.decoding import Alignment
from attnviz_app.app_pages.explore.math_panel import renormalised_note
from attnviz_app.app_pages.explore.views import LOCAL_NOTE


def alignment(rows: list[list[float]]) -> Alignment:
    w = np.array(rows, dtype=np.float32)  # [tgt, src]
    return Alignment(
        source_tokens=["a", "b", "<eos>"],
        target_tokens=["x", "y"],
        weights=w,
        scores=np.log(np.maximum(w, 1e-9)),
        contexts=np.zeros((2, 3)),
        states=np.zeros((2, 3)),
        source_unknown=[False, False, False],
        score="local_p",
        style="luong",
    )


def test_a_softmax_row_is_shown_over_its_weight_off_eos():
    note = renormalised_note(alignment([[0.2, 0.3, 0.5], [0.5, 0.5, 0.0]]), 0, 1)
    assert "rescales each row to sum to 1 without it: it shows 0.3 / 0.5 = **0.600**" in note
    assert "with `<eos>` (0.5)" in note


def test_a_local_p_row_keeps_its_total_and_one_without_eos_weight_has_no_note():
    al = alignment([[0.1, 0.2, 0.1], [0.1, 0.04, 0.0]])  # rows of 0.4 and 0.14: the Gaussian after the softmax
    note = renormalised_note(al, 0, 1)
    assert "rescales each row to keep its total, 0.4, without it: it shows 0.2 × 0.4 / 0.3 = **0.267**" in note
    assert renormalised_note(al, 1, 0) is None  # nothing on <eos>: the map shows the model's own weight
    tiny = alignment([[0.3, 0.3, 1e-27], [0.5, 0.5, 0.0]])  # a row a hair off 1 on <eos>: nothing to explain
    assert renormalised_note(tiny, 0, 0) is None


def test_local_m_centre_is_said_clipped_to_the_source():
    assert r"$p_t = \min(t, S-1)$" in LOCAL_NOTE
