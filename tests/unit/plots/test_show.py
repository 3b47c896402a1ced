"""The notebook's figures: ``attnviz.show``, ``show_both`` and ``show_steps`` return Plotly figures of
an alignment, two on one colour scale, and every step; bad arguments get a message that says what
to pass; ``import attnviz`` alone does not load Plotly."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import plotly.graph_objects as go
import pytest

import attnviz
from attnviz.errors import InputError
from tests.support.alignments import heatmaps, make_alignment


def test_show_draws_one_heatmap_and_says_what_the_display_options_changed():
    al = make_alignment(["the", "cat"], ["le", "chat"])
    fig = attnviz.show(al, title="mine")
    assert isinstance(fig, go.Figure) and fig.layout.title.text == "mine"
    [heatmap] = heatmaps(fig)
    assert np.allclose(np.asarray(heatmap.z, dtype=float), al.weights)
    hidden = attnviz.show(al, hide_eos=True, title="mine")
    assert np.shape(heatmaps(hidden)[0].z) == (3, 2) and "&lt;eos&gt; hidden" in hidden.layout.title.text
    scores = attnviz.show(al, values="scores")
    assert np.allclose(np.asarray(heatmaps(scores)[0].z, dtype=float), al.scores)


def test_show_both_puts_two_decodes_on_one_colour_scale_with_their_names():
    a = make_alignment(["the", "cat"], ["le", "chat"], seed=1)
    b = make_alignment(["the", "cat"], ["le", "chat", "noir"], seed=2)
    fig = attnviz.show_both(a, b)
    left, right = heatmaps(fig)
    assert (left.zmin, left.zmax) == (right.zmin, right.zmax) == (0.0, max(a.weights.max(), b.weights.max()))
    assert [t.text for t in fig.layout.annotations] == ["Bahdanau", "Luong"]
    with pytest.raises(InputError, match="two different labels"):
        attnviz.show_both(a, b, names=("same", "same"))


def test_show_steps_has_a_frame_per_step_and_bad_input_says_what_to_pass():
    al = make_alignment(["a", "b", "c"], ["x", "y"])
    assert len(attnviz.show_steps(al).frames) == 3
    with pytest.raises(InputError, match="pass an Alignment"):
        attnviz.show("the cat")
    with pytest.raises(InputError, match="values must be one of weights, scores"):
        attnviz.show(al, values="probabilities")


def test_import_attnviz_does_not_load_plotly_until_a_figure_is_asked_for():
    code = "import sys, attnviz; a = 'plotly' in sys.modules; attnviz.show; print(a, 'plotly' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]
    assert {"show", "show_both", "show_steps"} <= set(dir(attnviz))
