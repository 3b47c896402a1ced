"""Drift figures: the corpus profile (offsets by position, sentences by offset) and one sentence's links
with the shifted ones pointed back to their reference word."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.errors import InputError
from attnviz.links import corpus_drift, sentence_drift
from attnviz.plots.drift import KINDS, drift_profile, drift_sentence
from tests.support.alignments import hover_strings

DIAGONAL = [(k, k) for k in range(6)]
SHIFTED = [(k + 1, k) if k >= 2 else (k, k) for k in range(5)]  # +1 from target word 2; word 5 moved out


def test_the_profile_shows_each_offset_by_position_and_the_sentences_of_each_offset():
    report = corpus_drift([SHIFTED] * 3 + [DIAGONAL], [DIAGONAL] * 4, lengths=[(6, 6)] * 4, bins=3)
    fig = drift_profile(report, title="<b>toy</b> drift")
    heat, best, bars = fig.data
    assert heat.type == "heatmap" and best.type == "scatter" and bars.type == "bar"
    assert list(heat.y) == list(range(-3, 4))
    assert list(fig.layout.yaxis.ticktext) == ["-3", "-2", "-1", "0", "+1", "+2", "+3"]
    z = np.asarray(heat.z, dtype=float)  # [offsets, bins]
    assert z.shape == (7, 3) and z[3, 0] == 1.0 and z[4, 0] == 0.0  # the first third: on the reference
    assert z[4, 1] == 6 / 8 and z[4, 2] == 3 / 5  # drifted in three sentences of four; word 5 moved out
    assert list(best.x) == [0, 1, 2] and list(best.y) == [0, 1, 1]  # +1 wins from the middle third on
    assert list(bars.x) == [0, 0, 0, 1, 3, 0, 0] and bars.marker.color[4] != bars.marker.color[3]  # +1 dominant
    assert fig.layout.title.text == "&lt;b&gt;toy&lt;/b&gt; drift"
    assert list(fig.layout.xaxis.ticktext) == ["0–33%", "33–66%", "66–100%"]
    assert "target words" in fig.layout.xaxis.title.text and "source index" in fig.layout.yaxis.title.text
    assert "links agree" in hover_strings(fig)


def test_an_empty_profile_draws_no_best_offset():
    fig = drift_profile(corpus_drift([], []))
    heat, best, bars = fig.data
    assert np.isnan(np.asarray(heat.z, dtype=float)).all() and len(best.x) == 0 and sum(bars.x) == 0
    assert "no links" in hover_strings(fig)


def test_a_sentence_points_each_shifted_link_at_its_reference_word_and_marks_the_start():
    drift = sentence_drift(SHIFTED, DIAGONAL, length=6)
    src = ["<i>a</i>", "b", "c", "d", "e", "f"]
    fig = drift_sentence(src, list("uvwxyz"), SHIFTED, DIAGONAL, drift, title="pair <0>")
    names = [t.name for t in fig.data]
    assert names == ["reference", KINDS["agrees"][0], KINDS["shifted"][0]]  # no "elsewhere" link here
    shifted = fig.data[2]
    assert list(shifted.x) == [3, 4, 5] and list(shifted.y) == [2, 3, 4]
    arrows = [a for a in fig.layout.annotations if a.showarrow]
    assert [(a.ax, a.ay, a.x, a.y) for a in arrows] == [
        (3, 2, 2, 2),
        (4, 3, 3, 3),
        (5, 4, 4, 4),
    ]  # predicted -> reference
    assert [s.y0 for s in fig.layout.shapes] == [1.5]  # the dashed line above target word 2
    assert any(a.text == "offset +1 from here" for a in fig.layout.annotations)
    assert fig.layout.xaxis.ticktext[0] == "&lt;i&gt;a&lt;/i&gt;" and fig.layout.title.text == "pair &lt;0&gt;"
    assert "<i>" not in hover_strings(fig)
    assert list(fig.layout.yaxis.range) == [5.5, -0.5]  # the first target word on top, as in every map


def test_a_target_side_drift_is_a_vertical_line_and_no_drift_has_no_arrows():
    predicted = [(i, j - 1) if i >= 2 else (i, j) for i, j in DIAGONAL if i < 2 or j >= 1]
    drift = sentence_drift(predicted, DIAGONAL, side="target")
    fig = drift_sentence(list("abcdef"), list("uvwxyz"), predicted, DIAGONAL, drift, side="target")
    assert [s.x0 for s in fig.layout.shapes] == [1.5]
    plain = drift_sentence(list("abcdef"), list("uvwxyz"), DIAGONAL, DIAGONAL, sentence_drift(DIAGONAL, DIAGONAL))
    assert not plain.layout.shapes and not [a for a in plain.layout.annotations if a.showarrow]


def test_a_sentence_figure_refuses_links_or_a_drift_of_another_sentence():
    drift = sentence_drift(SHIFTED, DIAGONAL, length=6)
    with pytest.raises(InputError, match="outside"):
        drift_sentence(list("abc"), list("uvwxyz"), SHIFTED, DIAGONAL, drift)
    with pytest.raises(InputError, match="measured on this sentence"):
        drift_sentence(list("abcdefg"), list("uvwxyzq"), SHIFTED, DIAGONAL, drift)
    with pytest.raises(InputError, match="side must be"):
        drift_sentence(list("abcdef"), list("uvwxyz"), SHIFTED, DIAGONAL, drift, side="both")
