"""One decoder step's figures: the weights with the raw scores and a local window, and the context
vector as bars or, under a pixel a dimension, as two filled lines."""

import numpy as np
import pytest

from attnviz.errors import InputError
from attnviz.plots.heatmap import display_tokens
from attnviz.plots.steps import context_bar, step_bar
from tests.support.alignments import make_alignment


def test_step_bar_with_local_window():
    al = make_alignment(["a", "b", "c", "d", "e"], ["x", "y"], positions=np.array([1.0, 2.5, 4.0]), window=1)
    al.scores[1, 0] = -np.inf
    fig = step_bar(al, 1)
    bar = fig.data[0]
    assert bar.type == "bar" and np.allclose(bar.y, al.weights[1])
    assert list(fig.layout.xaxis.ticktext) == display_tokens(al.source_tokens)
    assert 0 not in list(fig.data[1].x)  # the -inf score is left out of the score line
    rect = next(s for s in fig.layout.shapes if s.type == "rect")
    assert (rect.x0, rect.x1) == (1.5, 3.5)
    with pytest.raises(InputError, match=r"0\.\.2"):
        step_bar(al, 3)


def test_a_context_vector_too_wide_for_its_column_is_drawn_as_lines_that_keep_every_dimension():
    al = make_alignment(["a", "b"], ["x"])
    al.contexts = np.random.default_rng(1).normal(size=(len(al.target_tokens), 512))  # [tgt, ctx_dim]
    c = al.contexts[0]
    wide = context_bar(al, 0)  # no column given, or one with a pixel or more a dimension: bars
    assert [tr.type for tr in wide.data] == ["bar"] and list(wide.data[0].y) == pytest.approx(c)
    assert [tr.type for tr in context_bar(al, 0, max_width=120 + 512).data] == ["bar"]
    narrow = context_bar(al, 0, max_width=400)  # under a pixel a bar would be drawn with no width
    up, down = narrow.data
    assert up.type == down.type == "scatter" and up.fill == down.fill == "tozeroy"
    assert np.asarray(up.y) + np.asarray(down.y) == pytest.approx(c)  # every dimension, by its sign
    assert (np.asarray(up.y) >= 0).all() and (np.asarray(down.y) <= 0).all()
    assert all(list(tr.customdata) == pytest.approx(c) for tr in narrow.data)  # the hover reads the value
