"""Data and training figures: training curves, length histograms, the gold heatmap."""

import numpy as np
import pandas as pd
import pytest

from attnviz.errors import InputError
from attnviz.plots.data import gold_heatmap, length_histogram, metric_scatter, training_curves


def test_training_curves():
    history = [
        {"step": 10, "epoch": 1, "loss": 2.0, "accuracy": 0.3},
        {"step": 20, "epoch": 1, "loss": 1.5, "accuracy": 0.5, "valid_loss": 1.7, "valid_accuracy": 0.4},
    ]
    fig = training_curves(history)
    names = {t.name: t for t in fig.data}
    assert set(names) == {"train loss", "valid loss", "train accuracy", "valid accuracy"}
    assert list(names["train loss"].x) == [10, 20] and list(names["valid loss"].x) == [20]
    assert len(training_curves([]).data) == 0
    with_rates = training_curves([{**h, "lr": 0.002 / (i + 1)} for i, h in enumerate(history)])
    rate = next(t for t in with_rates.data if t.name == "learning rate")
    assert list(rate.y) == [0.002, 0.001] and rate.xaxis == "x3"
    assert [a.text for a in with_rates.layout.annotations] == ["loss", "accuracy", "learning rate"]
    legend = fig.layout.legend  # a row of its own at the bottom edge, under the axis titles ("step")
    assert (legend.orientation, legend.y, legend.yref, legend.yanchor) == ("h", 0, "container", "bottom")
    assert fig.layout.margin.b >= 100


def test_length_histogram_and_gold_heatmap():
    df = pd.DataFrame({"source": ["a b c", "d"], "n": [3, 1]})
    assert list(length_histogram(df, "source").data[0].x) == [3, 1]
    assert list(length_histogram(df, "n").data[0].x) == [3, 1]
    with pytest.raises(InputError, match="source, n"):
        length_histogram(df, "target")
    fig = gold_heatmap(["a", "<b>"], ["x", "y", "z"], sure=[(0, 0), (1, 1)], possible=[(1, 2)])
    z = np.asarray(fig.data[0].z)
    assert z.shape == (3, 2) and z[0, 0] == 1.0 and z[2, 1] == 0.5 and z[0, 1] == 0.0
    assert list(fig.layout.xaxis.ticktext) == ["a", "&lt;b&gt;"]
    with pytest.raises(InputError):
        gold_heatmap(["a"], ["x"], sure=[(1, 0)])


def test_metric_scatter_draws_the_models_with_both_values_and_says_what_the_others_lack():
    rows = [
        {"model": "a", "score": "dot", "style": "luong", "bleu": 30.0, "aer": 0.3},
        {"model": "b", "score": "dot", "style": "bahdanau", "bleu": 31.0, "aer": None},
        {"model": "c", "score": "general", "style": "luong", "bleu": 32.0},
        {"model": "d", "score": "general", "style": "luong"},
    ]
    fig = metric_scatter(rows, "aer")
    assert [list(t.text) for t in fig.data] == [["a"]]
    assert fig.layout.title.text == "BLEU against AER"
    assert fig.layout.title.subtitle.text == "2 models without AER not drawn; 1 model without AER and BLEU not drawn"
    assert metric_scatter(rows[:1], "aer").layout.title.subtitle.text in (None, "")


def test_metric_scatter_axes_stay_within_what_the_metric_can_take():
    rows = [{"model": m, "score": "dot", "style": "luong", "bleu": 100.0, "aer": 0.0} for m in ("a", "b")]
    fig = metric_scatter(rows, "aer")
    assert fig.layout.yaxis.autorangeoptions.clipmax == 100.0
    assert fig.layout.yaxis.autorangeoptions.clipmin == 0.0
    assert fig.layout.xaxis.autorangeoptions.clipmin == 0.0
    assert fig.layout.xaxis.autorangeoptions.clipmax == 1.0
    assert all(trace.cliponaxis is False for trace in fig.data)
    assert fig.layout.yaxis.ticklabelstandoff == 8
    assert metric_scatter(rows, "entropy").layout.xaxis.autorangeoptions.clipmax is None
