"""Context-vector figures: the heatmap and the PCA projection."""

import numpy as np

from attnviz.plots.context import context_heatmap, context_projection
from attnviz.plots.heatmap import (
    display_tokens,
)
from tests.support.alignments import make_alignment


def test_context_views():
    al = make_alignment(["a", "b", "c"], ["x", "y", "z"])
    fig = context_heatmap(al)
    assert np.asarray(fig.data[0].z).shape == (4, 6)
    proj = context_projection(al)
    assert len(proj.data[0].x) == 4 and list(proj.data[0].text) == display_tokens(al.target_tokens)
    one = make_alignment(["a"], [])  # a single step still projects
    assert len(context_projection(one).data[0].x) == 1
