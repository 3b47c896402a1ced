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


def test_context_maps_share_a_scale_and_fit_a_column():
    from attnviz.plots.context import context_heatmap, context_range

    a = make_alignment(["a", "b"], ["x"], seed=1)
    b = make_alignment(["a", "b"], ["x"], seed=2)
    m = max(context_range(a), context_range(b))
    figs = [context_heatmap(al, title="Luong · m · context vectors", zmax=m, max_width=380) for al in (a, b)]
    assert {(f.data[0].zmin, f.data[0].zmax) for f in figs} == {(-m, m)}
    assert all(f.layout.width <= 380 and "Luong" in f.layout.title.text for f in figs)


def test_points_on_a_line_keep_a_flat_second_axis_and_one_step_a_readable_map():
    from attnviz.plots.context import MIN_PLOT_PX, pca_2d

    rng = np.random.default_rng(0)
    ends = rng.normal(size=(2, 8))  # a one-word source: every c_t mixes the same two vectors
    mixes = rng.random(5)[:, None]
    points = mixes * ends[0] + (1 - mixes) * ends[1]  # [5, 8], on one line, up to rounding
    coords, ratio = pca_2d(points)
    assert np.all(coords[:, 1] == 0.0) and ratio[1] == 0.0 and ratio[0] == 1.0  # no noise drawn as a spread
    coords, ratio = pca_2d(rng.normal(size=(5, 8)))
    assert np.all(coords[:, 1] != 0.0) and 0 < ratio[1] < ratio[0]
    one = context_heatmap(make_alignment(["a"], []))  # a single step
    assert one.layout.height >= 140 + MIN_PLOT_PX


def test_the_titles_are_the_given_text_then_c_t_as_markup():
    """The title's text (a model's name in it) is shown as written; c_t is Plotly's subscript, not literal tags."""
    fig = context_heatmap(make_alignment(["a"], ["x"]), title="<b>my model</b> · context vectors")
    assert fig.layout.title.text == "&lt;b&gt;my model&lt;/b&gt; · context vectors c<sub>t</sub>"
    assert context_heatmap(make_alignment(["a"], ["x"])).layout.title.text == "Context vectors c<sub>t</sub>"
    plane = context_projection(make_alignment(["a"], ["x", "y"]), title="<b>my model</b>")
    assert plane.layout.title.text == "&lt;b&gt;my model&lt;/b&gt; · c<sub>t</sub> in 2-D (PCA)"
