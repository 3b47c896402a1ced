"""What the Weights caption says of each map's rows, decided from the numbers drawn and the score."""

from __future__ import annotations

import numpy as np

from attnviz.decoding import Alignment
from attnviz_app.app_pages.explore.captions import row_sums


def _alignment(weights: list[list[float]], score: str, positions: list[float] | None = None) -> Alignment:
    w = np.asarray(weights, dtype=np.float32)  # [tgt, src]
    n_tgt, n_src = w.shape
    return Alignment(
        source_tokens=[f"s{i}" for i in range(n_src)],
        target_tokens=[f"t{i}" for i in range(n_tgt)],
        weights=w,
        scores=np.zeros_like(w),
        contexts=np.zeros((n_tgt, 2), dtype=np.float32),
        states=np.zeros((n_tgt, 2), dtype=np.float32),
        source_unknown=[False] * n_src,
        score=score,
        style="luong",
        positions=None if positions is None else np.asarray(positions),
    )


def test_softmax_rows_sum_to_1_and_local_p_rows_keep_less():
    assert row_sums(_alignment([[0.2, 0.8], [0.5, 0.5]], "general")) == "each row sums to 1"
    local_p = row_sums(_alignment([[0.2, 0.7], [0.4, 0.5]], "local_p", positions=[0.6, 1.0]))
    assert local_p.startswith("rows sum to 0.90 (local-p multiplies the softmax by a Gaussian")


def test_a_local_m_row_emptied_by_hiding_eos_is_said_as_such_not_as_a_gaussian():
    said = row_sums(_alignment([[0.3, 0.7], [0.0, 0.0]], "local_m", positions=[0.0, 1.0]))
    assert said == "rows sum to 0.00 to 1.00 (a row that put all its weight on the hidden `<eos>` is 0)"
