"""The replay figure: a probe's heatmap on a fixed 0..1 scale with gold links, the loss, AER and
entropy curves with a marker at the current point, one animation frame per place on the progress
axis (shared by two histories), and a self-contained HTML export."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.errors import InputError
from attnviz.plots import point_label, replay_figure, replay_html
from tests.support.histories import tiny_history as _history


def test_one_history_replays_frame_by_frame_on_a_fixed_scale():
    history = _history([0, 1, 2, 4, 8])
    fig = replay_figure({"model": history})
    heatmap = fig.data[0]
    assert heatmap.type == "heatmap" and (heatmap.zmin, heatmap.zmax) == (0.0, 1.0)
    assert np.allclose(heatmap.z, history["probes"][0]["weights"][-1])  # opens at the last point
    assert "&lt;b&gt;" in fig.layout.xaxis.ticktext  # tokens are escaped
    gold = [t for t in fig.data if t.name == "gold link"]
    assert list(gold[0].x) == [0] and list(gold[0].y) == [0]
    curves = {t.name: t for t in fig.data if t.type == "scatter" and t.mode == "lines+markers"}
    assert len(curves) == 1 or all(c.x is not None for c in curves.values())
    assert [f.name for f in fig.frames] == ["0", "1", "2", "4", "8"]
    assert np.allclose(fig.frames[0].data[0].z, history["probes"][0]["weights"][0])
    assert "untrained" in fig.frames[0].layout.title.text and "step 8" in fig.layout.title.text
    # the markers on the three curves move to the frame's point
    markers = fig.frames[2].data[1:]
    assert [list(m.x) for m in markers] == [[2.0]] * 3
    assert fig.layout.sliders[0].active == 4 and len(fig.layout.sliders[0].steps) == 5
    assert fig.layout.updatemenus[0].buttons[0].method == "animate"


def test_a_point_without_a_value_has_no_marker_on_that_curve():
    fig = replay_figure({"model": _history([0, 2, 4])}, index=0)
    loss_marker = fig.frames[0].data[1]  # loss is not measured before the first step
    assert list(loss_marker.x) == [] and "loss" not in point_label(_history([0])["points"][0])


def test_without_gold_there_is_no_aer_curve():
    fig = replay_figure({"model": _history([0, 1, 2], aer=False)})
    titles = [a.text for a in fig.layout.annotations]
    assert "AER (probes)" not in titles and "training loss" in titles


def test_two_histories_share_one_axis_of_progress():
    early, late = _history([0, 2, 4]), _history([0, 3, 6])
    fig = replay_figure({"Bahdanau": early, "Luong": late}, axis="step")
    assert [f.name for f in fig.frames] == ["0", "2", "3", "4", "6"]
    # at step 3 the first history shows its step-2 point, the second its step-3 point
    frame = fig.frames[2]
    assert np.allclose(frame.data[0].z, early["probes"][0]["weights"][1])
    assert np.allclose(frame.data[1].z, late["probes"][0]["weights"][1])
    assert "Bahdanau: step 2" in frame.layout.title.text and "Luong: step 3" in frame.layout.title.text
    by_epochs = replay_figure({"Bahdanau": early, "Luong": late}, axis="epochs")
    assert [f.name for f in by_epochs.frames] == ["0.00", "0.50", "0.75", "1.00", "1.50"]


def test_bad_requests_are_input_errors():
    history = _history([0, 1])
    with pytest.raises(InputError, match="axis"):
        replay_figure({"m": history}, axis="time")
    with pytest.raises(InputError, match="probe"):
        replay_figure({"m": history}, probe=3)
    with pytest.raises(InputError, match="no recorded points"):
        replay_figure({"m": {"points": [], "probes": history["probes"]}})
    with pytest.raises(InputError, match="index"):
        replay_figure({"m": history}, index=9)


def test_the_html_export_is_self_contained():
    page = replay_html(replay_figure({"model": _history([0, 1, 2])}), title="toy <replay>")
    assert page.lower().startswith("<!doctype html>") and "<title>toy &lt;replay&gt;</title>" in page
    assert len(page) > 1_000_000 and '<script src="http' not in page  # plotly.js inlined: plays offline
    assert '"frames"' in page or "addFrames" in page


def _probe_of(history: dict, source: list[str], target: list[str]) -> dict:
    """``history`` with its probe's tokens replaced, its weights uniform on the new grid, no gold."""
    probe = dict(history["probes"][0])
    t, s = len(target), len(source)
    weights = [np.full((t, s), 1 / s).tolist() for _ in probe["weights"]]  # [points, T, S], uniform
    probe.update(source_tokens=source, target_tokens=target, sure=None, weights=weights)
    return {"points": history["points"], "probes": [probe]}


@pytest.mark.parametrize("n", [1, 2])
def test_the_title_legend_buttons_and_slider_keep_apart(n):
    """Nothing shares a place: the title starts under Plotly's mode bar (25 px high, the figure's top
    right corner), the legend has a row under the title, the play buttons a row under the plots and
    the slider (its current value at its top left) a row under the buttons, across the whole width."""
    names = ["Bahdanau", "Luong"][:n]
    fig = replay_figure({name: _history([0, 1, 2, 4]) for name in names})
    layout, height = fig.layout, fig.layout.height
    px = lambda y: round((1 - y) * height)  # noqa: E731  (a container y as pixels from the top)
    assert (layout.title.yref, layout.title.yanchor) == ("container", "top") and px(layout.title.y) >= 34
    assert sum(t.showlegend is not False for t in fig.data if t.type == "scatter") == (2 if n == 2 else 0)
    if n == 2:
        legend_top = px(layout.legend.y)
        assert (layout.legend.yref, layout.legend.yanchor) == ("container", "top")
        assert legend_top >= px(layout.title.y) + 20 * n, "the legend's row is under the title's lines"
        assert legend_top + 26 <= layout.margin.t - 20, "the legend ends above the source tokens"
    buttons, slider = layout.updatemenus[0], layout.sliders[0]
    assert (buttons.y, buttons.yanchor, slider.y, slider.yanchor) == (0, "top", 0, "top")
    assert buttons.pad.t >= 50, "the buttons start under the curves' axis titles"
    assert slider.pad.t >= buttons.pad.t + 36, "the slider's current value sits under the buttons"
    assert (slider.x, slider.len) == (0, 1) and layout.margin.b >= slider.pad.t + 70


def test_two_heatmaps_leave_room_for_the_second_ones_labels():
    """In Both the second map's target tokens and its model's name sit between the two maps: the
    gap (at the narrowest planned width) is wider than they are, and the left margin holds the first's."""
    from attnviz.plots.history import NARROW_PX

    long = ["Fußgängerüberweg", "x", "<eos>"]  # 16 characters
    history = _probe_of(_history([0, 1, 2]), ["a", "b", "<eos>"], long)
    fig = replay_figure({"Bahdanau": history, "Luong": history})
    paper = NARROW_PX - fig.layout.margin.l - fig.layout.margin.r
    left, right = fig.layout.xaxis.domain, fig.layout.xaxis2.domain  # the two heatmaps
    labels = 16 * 7 + 28  # the longest token's characters at 7 px, and the y axis title
    assert (right[0] - left[1]) * paper >= labels and fig.layout.margin.l >= labels
    assert fig.layout.xaxis.ticktext == ("a", "b", "&lt;eos&gt;")


def test_source_tokens_stand_upright_or_turn_vertical_in_narrow_columns():
    history = _history([0, 1, 2])
    short = replay_figure({"m": _probe_of(history, ["a", "b", "<eos>"], ["x", "<eos>"])})
    crowded = replay_figure({"m": _probe_of(history, ["neighbourhood"] * 12 + ["<eos>"], ["x", "<eos>"])})
    assert short.layout.xaxis.tickangle == 0 and crowded.layout.xaxis.tickangle == -90


def test_model_names_are_text_in_the_legend_title_and_hover():
    """A model file's name is not Plotly markup: bold, links and a hovertemplate variable stay as written."""
    name = "<b>x</b><a href='https://e.example'>y</a>%{y}"
    fig = replay_figure({name: _history([0, 1]), "other": _history([0, 1])})
    curves = [t for t in fig.data if t.type == "scatter" and t.mode == "lines+markers"]
    named = [t for t in curves if t.legendgroup != "other"]
    assert named and all(
        t.name == "&lt;b&gt;x&lt;/b&gt;&lt;a href='https://e.example'&gt;y&lt;/a&gt;&#37;{y}" for t in named
    )
    assert all("<b>x" not in t.hovertemplate and "%{y}<br>" not in t.hovertemplate.split("<br>")[0] for t in named)
    assert "<a" not in fig.layout.title.text and "&lt;a href" in fig.layout.title.text
