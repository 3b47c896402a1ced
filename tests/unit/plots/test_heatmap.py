import json
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from attnviz.decoding.trace import Alignment
from attnviz.errors import InputError
from attnviz.plots.compare import (
    compare_heatmaps,
    difference_heatmap,
    encoder_attention_heatmaps,
    entropy_plot,
    js_plot,
)
from attnviz.plots.context import context_heatmap, context_projection
from attnviz.plots.data import gold_heatmap, length_histogram, training_curves
from attnviz.plots.explore import coverage_bar
from attnviz.plots.heatmap import (
    alignment_heatmap,
    cell_hover,
    display_tokens,
    plot_config,
    step_bar,
)


def make_alignment(
    source: list[str],
    target: list[str],
    seed: int = 0,
    unknown: list[bool] | None = None,
    **extra,
) -> Alignment:
    """A random but valid alignment over ``source + <eos>`` and ``target + <eos>``."""
    source, target = [*source, "<eos>"], [*target, "<eos>"]
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(len(target), len(source)))  # [tgt, src]
    weights = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    return Alignment(
        source_tokens=source,
        target_tokens=target,
        weights=weights,
        scores=scores,
        contexts=rng.normal(size=(len(target), 6)),
        states=rng.normal(size=(len(target), 6)),
        source_unknown=unknown or [False] * len(source),
        score="general",
        style="luong",
        **extra,
    )


def heatmaps(fig: go.Figure) -> list:
    return [t for t in fig.data if t.type == "heatmap"]


def hover_strings(fig: go.Figure) -> str:
    """Every hover string the figure carries, as one blob."""
    return json.dumps([np.asarray(t.text).tolist() for t in fig.data if t.text is not None], ensure_ascii=False)


def test_ticktext_equals_escaped_tokens():
    al = make_alignment(["the", "cat", "sat"], ["le", "chat"])
    fig = alignment_heatmap(al)
    assert list(fig.layout.xaxis.ticktext) == display_tokens(al.source_tokens)
    assert list(fig.layout.yaxis.ticktext) == display_tokens(al.target_tokens)
    assert list(fig.layout.xaxis.ticktext)[:3] == al.source_tokens[:3]
    assert fig.layout.xaxis.tickmode == "array"
    assert tuple(fig.layout.yaxis.range) == (2.5, -0.5)  # reversed: first step on top


def test_repeated_tokens_keep_separate_columns():
    al = make_alignment(["the", "cat", "saw", "the", "dog"], ["le", "chat"])
    fig = alignment_heatmap(al)
    heat = heatmaps(fig)[0]
    assert list(heat.x) == list(range(6))
    assert list(fig.layout.xaxis.tickvals) == list(range(6))
    assert list(fig.layout.xaxis.ticktext).count("the") == 2
    assert np.asarray(heat.z).shape == (3, 6)


def test_html_tokens_escaped_in_ticks_and_hover():
    al = make_alignment(["<script>alert(1)</script>", "<b>bold</b>", "a&b"], ["<i>x</i>", "ok"])
    for values in ("weights", "scores"):
        fig = alignment_heatmap(al, values)
        ticks = list(fig.layout.xaxis.ticktext) + list(fig.layout.yaxis.ticktext)
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in ticks
        assert "&lt;b&gt;bold&lt;/b&gt;" in ticks
        assert "a&amp;b" in ticks
        assert "&lt;i&gt;x&lt;/i&gt;" in ticks
        hover = hover_strings(fig)
        assert "&lt;script&gt;" in hover and "&lt;b&gt;bold" in hover and "&lt;i&gt;x" in hover
        assert "<script>" not in hover and "<b>" not in hover and "<i>" not in hover


def test_display_tokens_space_emoji_and_empty():
    assert display_tokens([" ", "🙂", "", "l'eau"]) == ["␣", "🙂", "∅", "l'eau"]
    al = make_alignment(["🙂", "🐈", " "], ["😀"])
    fig = alignment_heatmap(al)
    assert list(fig.layout.xaxis.ticktext) == ["🙂", "🐈", "␣", "&lt;eos&gt;"]
    fig.to_json()


def test_the_heatmap_carries_its_own_hover_and_no_click_layer():
    al = make_alignment(["a", "b", "c"], ["x", "y", "z", "w"])
    fig = alignment_heatmap(al, show_gold=[(0, 0), (1, 2)])
    assert [t.type for t in fig.data] == ["heatmap", "scatter"]  # the gold links; clicks go to the heatmap
    heat = heatmaps(fig)[0]
    assert np.shape(heat.text) == np.shape(heat.customdata) == np.shape(al.weights)  # [tgt, src]
    assert "target [2]" in heat.text[2][3] and "source [3]" in heat.text[2][3]
    assert heat.customdata[2][3] == pytest.approx(al.scores[2, 3])  # the score under the weights map
    assert "weight: %{z:.3f}" in heat.hovertemplate and "score: %{customdata:.3f}" in heat.hovertemplate
    scores = heatmaps(alignment_heatmap(al, "scores"))[0]
    assert scores.customdata[2][3] == pytest.approx(al.weights[2, 3]) and "score: %{z:.3f}" in scores.hovertemplate
    assert heatmaps(alignment_heatmap(al, hover=False))[0].hoverinfo == "skip"
    gold = next(t for t in fig.data if t.name == "gold")
    assert list(gold.x) == [0, 1] and list(gold.y) == [0, 2]
    text, other, template = cell_hover(al)
    assert text.shape == other.shape == np.shape(al.weights) and template.endswith("<extra></extra>")


def test_minus_inf_scores_are_blank():
    al = make_alignment(["a", "b", "c", "d"], ["x", "y"], positions=np.array([0.5, 2.0, 3.0]), window=1)
    al.scores[0, 3] = -np.inf
    al.scores[1, 0] = -np.inf
    fig = alignment_heatmap(al, values="scores")
    z = np.asarray(heatmaps(fig)[0].z, dtype=float)
    assert np.isnan(z[0, 3]) and np.isnan(z[1, 0])
    assert np.isfinite(z[2]).all()
    assert "outside the local window" in hover_strings(fig)
    spec = json.loads(fig.to_json())
    assert spec["layout"]["xaxis"]["ticktext"] == display_tokens(al.source_tokens)
    assert any(t.name == "p_t" for t in fig.data)


def test_unknown_tokens_marked_without_changing_ticktext():
    al = make_alignment(["the", "zorblax"], ["le"], unknown=[False, True, False])
    fig = alignment_heatmap(al)
    assert list(fig.layout.xaxis.ticktext) == display_tokens(al.source_tokens)
    marks = [a for a in fig.layout.annotations if a.text == "⚠"]
    assert len(marks) == 1 and marks[0].x == 1
    assert "zorblax ⚠ unknown word" in hover_strings(fig)


def test_long_sentence_grows_and_rotates():
    short = alignment_heatmap(make_alignment(["a", "b"], ["x"]))
    words = [f"word{k}" for k in range(80)]
    long = alignment_heatmap(make_alignment(words, words[:70]))
    assert long.layout.width > short.layout.width and long.layout.height > short.layout.height
    assert long.layout.width >= 80 * 18 and long.layout.height >= 70 * 18
    assert long.layout.xaxis.tickangle == -60
    assert short.layout.xaxis.tickangle == 0


def test_highlight_step_and_bad_arguments():
    al = make_alignment(["a", "b"], ["x", "y"])
    fig = alignment_heatmap(al, highlight_step=1, title="<b>t</b>")
    assert fig.layout.shapes[0].y0 == 0.5 and fig.layout.title.text == "&lt;b&gt;t&lt;/b&gt;"
    with pytest.raises(InputError):
        alignment_heatmap(al, highlight_step=3)
    with pytest.raises(InputError, match="source, target"):
        alignment_heatmap(al, show_gold=[(5, 0)])
    with pytest.raises(InputError, match="weights"):
        alignment_heatmap(al, values="probs")


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


def test_context_views():
    al = make_alignment(["a", "b", "c"], ["x", "y", "z"])
    fig = context_heatmap(al)
    assert np.asarray(fig.data[0].z).shape == (4, 6)
    proj = context_projection(al)
    assert len(proj.data[0].x) == 4 and list(proj.data[0].text) == display_tokens(al.target_tokens)
    one = make_alignment(["a"], [])  # a single step still projects
    assert len(context_projection(one).data[0].x) == 1


def test_compare_heatmaps_share_scale_and_one_colorbar():
    a = make_alignment(["a", "b", "c"], ["x", "y"], seed=1)
    b = make_alignment(["a", "b", "c"], ["x", "y", "z"], seed=2)
    fig = compare_heatmaps({"bahdanau": a, "luong <dot>": b})
    hs = heatmaps(fig)
    assert len(hs) == 2
    assert hs[0].zmin == hs[1].zmin == 0.0
    assert hs[0].zmax == hs[1].zmax == pytest.approx(max(a.weights.max(), b.weights.max()))
    assert [bool(h.showscale) for h in hs] == [False, True]
    assert list(fig.layout.xaxis2.ticktext) == display_tokens(b.source_tokens)
    assert list(fig.layout.yaxis2.ticktext) == display_tokens(b.target_tokens)
    assert "luong &lt;dot&gt;" in [ann.text for ann in fig.layout.annotations]
    scores = heatmaps(compare_heatmaps({"a": a, "b": b}, values="scores"))
    assert scores[0].zmin == scores[1].zmin == -scores[0].zmax


def test_difference_of_identical_alignments_is_zero():
    a = make_alignment(["a", "b"], ["x", "y"])
    fig = difference_heatmap(a, a)
    assert np.allclose(np.asarray(fig.data[0].z), 0.0)
    assert fig.data[0].zmin == -fig.data[0].zmax
    b = make_alignment(["a", "b"], ["x", "y"], seed=3)
    z = np.asarray(difference_heatmap(a, b).data[0].z)
    assert np.allclose(z, a.weights - b.weights)


def test_step_comparisons_need_the_same_grid():
    a = make_alignment(["a", "b"], ["x", "y"])
    with pytest.raises(InputError, match="forced decoding"):
        difference_heatmap(a, make_alignment(["a", "b"], ["x"]))
    with pytest.raises(InputError, match="different source"):
        js_plot(a, make_alignment(["a", "c"], ["x", "y"]))


def test_entropy_and_js_plots():
    a = make_alignment(["a", "b", "c"], ["x", "y"], seed=1)
    b = make_alignment(["a", "b", "c"], ["x", "z"], seed=2)
    fig = entropy_plot({"A": a, "B": b})
    assert len(fig.data) == 2 and np.allclose(fig.data[0].y, a.entropy())
    assert fig.layout.shapes[0].y0 == pytest.approx(math.log(4))
    js = js_plot(a, a)
    assert np.allclose(js.data[0].y, 0.0)
    assert "y / z" in list(js_plot(a, b).layout.xaxis.ticktext)


def test_encoder_attention_grid_and_single():
    ea = np.full((2, 3, 4, 4), 0.25)  # [layers, heads, src, src]
    al = make_alignment(["a", "b", "c"], ["x"], encoder_attention=ea)
    assert len(heatmaps(encoder_attention_heatmaps(al))) == 6
    assert len(heatmaps(encoder_attention_heatmaps(al, layer=1))) == 3
    assert len(heatmaps(encoder_attention_heatmaps(al, layer=1, head=2))) == 1
    with pytest.raises(InputError, match="layer"):
        encoder_attention_heatmaps(al, layer=2)
    with pytest.raises(InputError, match="no Transformer encoder"):
        encoder_attention_heatmaps(make_alignment(["a"], ["x"]))


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


def test_plot_config():
    assert plot_config("alignment")["toImageButtonOptions"] == {"format": "png", "filename": "alignment", "scale": 2}
    assert plot_config("a", "svg")["toImageButtonOptions"]["format"] == "svg"
    with pytest.raises(InputError):
        plot_config("a", "gif")


def test_coverage_is_the_column_sum_and_flags_dropped_and_repeated_words():
    weights = np.array([[0.9, 0.05, 0.05], [0.9, 0.05, 0.05], [0.1, 0.1, 0.8]])  # "a" read twice, "b" never
    al = Alignment(["a", "b", "<eos>"], ["x", "y", "<eos>"], weights, np.log(weights), np.zeros((3, 2)),
                   np.zeros((3, 2)), [False] * 3, "dot", "luong")  # fmt: skip
    assert np.allclose(al.coverage(), [1.9, 0.2, 0.9])
    assert al.to_dict()["coverage"] == pytest.approx([1.9, 0.2, 0.9])
    fig = coverage_bar(al)
    bar = fig.data[0]
    assert list(bar.y) == pytest.approx([1.9, 0.2, 0.9])
    assert bar.marker.color[0] != bar.marker.color[2] != bar.marker.color[1]  # repeated, normal, dropped
    assert list(fig.layout.xaxis.ticktext) == ["a", "b", "&lt;eos&gt;"]
    assert "1.900 in total over 3 steps" in bar.text[0]
    assert len(coverage_bar(make_alignment(["<b>x</b>"] * 30, ["y"] * 5)).data[0].y) == 31


def test_a_narrow_map_fits_its_long_title_instead_of_clipping_it():
    from attnviz.plots.explore import CHAR_EM, MIN_TITLE_PX, TITLE_PX, explore_heatmap

    al = make_alignment(["a", "b"], ["x"])
    title = "multi30k-de-en-additive-bahdanau · additive / bahdanau (<eos> hidden, rows renormalised)"
    fig = explore_heatmap(al, "weights", title, max_width=430)
    size = fig.layout.title.font.size
    lines = fig.layout.title.text.split("<br>")
    assert MIN_TITLE_PX <= size < TITLE_PX
    assert all(
        len(line.replace("&lt;", "<").replace("&gt;", ">")) * size * CHAR_EM <= fig.layout.width for line in lines
    )
    assert "&lt;eos&gt;" in fig.layout.title.text  # entities kept whole
    short = explore_heatmap(al, "weights", "short").layout.title
    assert short.font.size is None and "<br>" not in short.text


def test_figures_carry_the_house_template_unchanged():
    import plotly.io as pio

    from attnviz.plots.heatmap import TEMPLATE, apply_template

    before = TEMPLATE.to_plotly_json()
    fig = apply_template(go.Figure(go.Bar(x=[1], y=[1])))
    fig.update_layout(plot_bgcolor="#eeeeee")  # a figure's own layout wins over the template
    assert fig.to_plotly_json()["layout"]["template"] == pio.templates["plotly_white"].to_plotly_json()
    assert fig.layout.plot_bgcolor == "#eeeeee" and TEMPLATE.to_plotly_json() == before


def test_side_by_side_maps_start_at_one_height():
    from attnviz.plots.explore import align_tops, explore_heatmap

    al = make_alignment(["a", "b"], ["x"])
    short = explore_heatmap(al, "weights", "m", max_width=200)
    wrapped = explore_heatmap(al, "weights", "multi30k-en-de-additive-bahdanau · additive / bahdanau", max_width=200)
    assert wrapped.layout.margin.t > short.layout.margin.t  # the wrapped title took more room
    before = {id(f): (f.layout.margin.t, f.layout.height) for f in (short, wrapped)}
    align_tops([short, wrapped])
    assert short.layout.margin.t == wrapped.layout.margin.t == before[id(wrapped)][0]
    assert wrapped.layout.height == before[id(wrapped)][1]  # the taller one is unchanged
    grown = short.layout.height - before[id(short)][1]
    assert grown == short.layout.margin.t - before[id(short)][0] > 0  # the plot area keeps its size
    assert short.layout.title.font.size == wrapped.layout.title.font.size  # one title size side by side


def test_side_by_side_titles_share_the_smaller_font():
    from attnviz.plots.explore import align_tops, explore_heatmap

    al = make_alignment(list("abcdefghij"), list("xyz"))
    long, short = (explore_heatmap(al, "weights", f"multi30k-de-en-general-{s} · general / {s}", max_width=420)
                   for s in ("bahdanau", "luong"))  # fmt: skip
    assert long.layout.title.font.size < (short.layout.title.font.size or 17)  # fitted to its width alone
    align_tops([long, short])
    assert long.layout.title.font.size == short.layout.title.font.size


def test_attribution_map_hover_names_the_attribution_and_the_attention():
    from attnviz.plots.explore import attribution_heatmap

    al = make_alignment(["a", "b"], ["x", "y"])
    values = np.arange(np.size(al.weights), dtype=float).reshape(np.shape(al.weights)) - 2  # [tgt, src]
    heat = heatmaps(attribution_heatmap(values, al, "ig"))[0]
    assert heat.customdata is None and heat.hovertemplate == "%{text}<extra></extra>"
    assert np.shape(heat.text) == np.shape(al.weights)
    text = heat.text[1][2]
    assert f"attribution {values[1, 2]:+.4f}" in text and f"attention {al.weights[1, 2]:.3f}" in text


def test_narrow_cells_get_smaller_upright_labels_that_do_not_overlap():
    """Both's two maps share a 1280-px page (columns of 394 px): where full-size labels would not
    fit, the colour bar moves under the map to give the cells its width, and the labels shrink with
    the cells (2 px under them, 12 down to 10 px), so upright labels do not print over each other."""
    from attnviz.plots.explore import explore_heatmap
    from attnviz.plots.heatmap import MIN_TICK_PX, TICK_PX, step_bar

    sentence = "zwei junge männer in orangefarbenen westen reparieren mit schweren werkzeugen eine schiene neben"
    words = [*sentence.split(), "einer", "belebten", "kreuzung", "."]
    al = make_alignment(words, ["two", "young", "men", "repair", "a", "rail"])
    wide = explore_heatmap(al, "weights", "m", max_width=860)
    assert wide.layout.xaxis.tickfont.size == TICK_PX and wide.data[0].colorbar.orientation is None  # beside
    narrow = explore_heatmap(al, "weights", "m", max_width=390)
    assert narrow.layout.width <= 390 and narrow.data[0].colorbar.orientation == "h"  # under the map
    assert narrow.layout.xaxis.tickangle == -90
    assert MIN_TICK_PX <= narrow.layout.xaxis.tickfont.size == narrow.layout.yaxis.tickfont.size <= TICK_PX
    longer = explore_heatmap(make_alignment(words * 2, ["two", "men"]), "weights", "m", max_width=390)
    assert longer.layout.xaxis.tickfont.size == MIN_TICK_PX  # 35 columns: the smallest labels
    bars = step_bar(al, 0, max_width=390)
    assert bars.layout.width <= 390 and bars.layout.xaxis.tickfont.size < TICK_PX
    assert step_bar(al, 0).layout.xaxis.tickfont.size == TICK_PX  # unconstrained: full-size labels
