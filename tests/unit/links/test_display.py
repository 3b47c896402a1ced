"""What moved out of the pages into the library: display transforms, the evaluation-data rule."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.decoding.trace import Alignment
from attnviz.errors import ConfigError, InputError
from attnviz.evaluation.evaluate import measured_on
from attnviz.links.display import common_steps, first_steps, without_eos


def alignment(weights, target=None, source=("a", "b", "<eos>")) -> Alignment:
    w = np.asarray(weights, dtype=np.float32)
    n_tgt, n_src = w.shape
    return Alignment(
        source_tokens=list(source), target_tokens=list(target or [f"y{t}" for t in range(n_tgt)]), weights=w,
        scores=np.log(w + 1e-9), contexts=np.zeros((n_tgt, 4)), states=np.zeros((n_tgt, 4)),
        source_unknown=[False] * n_src, score="dot", style="luong",
    )  # fmt: skip


def test_hiding_eos_renormalises_each_row_and_keeps_an_all_eos_row_empty():
    al = alignment([[0.2, 0.2, 0.6], [0.0, 0.0, 1.0]])
    hidden = without_eos(al)
    assert hidden.source_tokens == ["a", "b"] and hidden.source_unknown == [False, False]
    np.testing.assert_allclose(hidden.weights, [[0.5, 0.5], [0.0, 0.0]])
    assert hidden.scores.shape == (2, 2) and hidden.target_tokens == al.target_tokens
    np.testing.assert_allclose(al.weights[:, -1], [0.6, 1.0], rtol=1e-6)  # the decode itself is untouched


def test_two_decodes_of_different_length_line_up_by_step():
    a = alignment([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    b = alignment([[0, 1, 0], [0, 0, 1]])
    a2, b2 = common_steps(a, b)
    assert len(a2.target_tokens) == len(b2.target_tokens) == 2
    np.testing.assert_array_equal(a2.weights, a.weights[:2])
    with pytest.raises(InputError):
        first_steps(a, 4)
    with pytest.raises(InputError, match="different source"):
        common_steps(a, alignment([[1.0, 0.0]], source=("x", "<eos>")))


def test_a_model_is_measured_on_its_own_data_spec_with_folder_and_columns_kept():
    options = {"subwords": [8000, 0], "n_test": 50}
    meta = {"task": "multi30k-de-en", "recipe_full": {"data": "multi30k-de-en@/data/m30k", "data_options": options}}
    assert measured_on(meta) == ("multi30k-de-en@/data/m30k", {"n_test": 50})  # subwords only cut training text
    table = {"recipe_full": {"data": "pairs.csv?src=en&tgt=fr", "data_options": {}}}
    assert measured_on(table) == ("pairs.csv?src=en&tgt=fr", {})
    assert measured_on(meta, data="toy-fr") == ("toy-fr", {})
    with pytest.raises(ConfigError, match="--data"):
        measured_on({})
