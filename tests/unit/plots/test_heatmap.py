"""The alignment heatmap: escaped tokens, hover, -inf scores, unknown words, sizes, the house
template, the plot config."""

import json
import re
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest

from attnviz.errors import InputError
from attnviz.plots.heatmap import (
    alignment_heatmap,
    cell_hover,
    display_tokens,
    plot_config,
    tick_angle,
)
from tests.support.alignments import heatmaps, hover_strings, make_alignment


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


@pytest.mark.parametrize("unknown", [[False, False, False], [True, False, False]])
def test_a_legend_above_the_grid_clears_the_unknown_words_marks(unknown):
    """local-p's p_t legend sits above the grid, where a ⚠ marks an unknown word: it moves up by the
    mark's height, and the figure grows by as much, only where there is a mark. (It covered the mark.)"""
    al = make_alignment(
        ["zzyzx", "the"], ["le", "chat"], unknown=unknown, positions=np.array([0.5, 1.0, 2.0]), window=1
    )
    fig = alignment_heatmap(al)
    plot_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    legend_px = (fig.layout.legend.y - 1.0) * plot_px  # its bottom edge above the grid's top
    marked = any(unknown)
    assert [a.text for a in fig.layout.annotations if a.text == "⚠"] == (["⚠"] if marked else [])
    assert legend_px == pytest.approx(20 if marked else 0)
    plain = alignment_heatmap(
        make_alignment(["zzyzx", "the"], ["le", "chat"], positions=np.array([0.5, 1.0, 2.0]), window=1)
    )
    assert fig.layout.height - plain.layout.height == (20 if marked else 0)


def test_long_sentence_grows_and_rotates():
    short = alignment_heatmap(make_alignment(["a", "b"], ["x"]))
    words = [f"word{k}" for k in range(80)]
    long = alignment_heatmap(make_alignment(words, words[:70]))
    assert long.layout.width > short.layout.width and long.layout.height > short.layout.height
    assert long.layout.width >= 80 * 18 and long.layout.height >= 70 * 18
    assert long.layout.xaxis.tickangle == -90  # 18 px cells: a slanted "word12" would cover its neighbours
    assert tick_angle(["word12"], 40) == -60 and tick_angle(["apple"], 20) == -90
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


def test_plot_config():
    assert plot_config("alignment")["toImageButtonOptions"] == {"format": "png", "filename": "alignment", "scale": 2}
    assert plot_config("a", "svg")["toImageButtonOptions"]["format"] == "svg"
    with pytest.raises(InputError):
        plot_config("a", "gif")


def test_figures_carry_the_house_template_unchanged():
    import plotly.io as pio

    from attnviz.plots.heatmap import TEMPLATE, TEMPLATE_TRACES, apply_template

    before = TEMPLATE.to_plotly_json()
    fig = apply_template(go.Figure(go.Bar(x=[1], y=[1])))
    fig.update_layout(plot_bgcolor="#eeeeee")  # a figure's own layout wins over the template
    template = fig.to_plotly_json()["layout"]["template"]
    assert fig.layout.plot_bgcolor == "#eeeeee" and TEMPLATE.to_plotly_json() == before
    # plotly_white, with tick labels that may cross the figure's edge (no measuring after each draw)
    white = pio.templates["plotly_white"].to_plotly_json()
    assert "ticklabeloverflow" not in str(white)  # its own left as is
    layout = template["layout"]
    bar = template["data"]["heatmap"][0]["colorbar"]
    overflow = [layout["xaxis"], layout["yaxis"], layout["coloraxis"]["colorbar"], bar]
    assert [a.pop("ticklabeloverflow") for a in overflow] == ["allow"] * 4
    # the parts kept are plotly_white's own: the trace types attnviz draws and the 2D layout
    assert set(template["data"]) == set(TEMPLATE_TRACES)
    assert all(template["data"][kind] == white["data"][kind] for kind in TEMPLATE_TRACES)
    assert layout == {name: value for name, value in white["layout"].items() if name in layout}
    assert {"colorway", "colorscale", "font", "hoverlabel", "xaxis", "yaxis", "coloraxis"} <= set(layout)


def test_the_template_leaves_out_what_no_figure_draws():
    """3D scenes, polar, ternary and geo subplots, and 20 trace types attnviz never draws went to the
    browser in every figure (4.6 of the template's 7.3 kB)."""
    from attnviz import plots
    from attnviz.plots.heatmap import TEMPLATE

    spec = TEMPLATE.to_plotly_json()
    assert not {"scene", "polar", "ternary", "geo", "mapbox"} & set(spec["layout"])
    assert not {"scatter3d", "surface", "pie", "choropleth", "table"} & set(spec["data"])
    assert len(json.dumps(spec)) < 3000
    # every trace type the figure builders make keeps its defaults (a new one must be added to the template)
    source = " ".join(path.read_text(encoding="utf-8") for path in Path(plots.__file__).parent.glob("*.py"))
    made = {name.lower() for name in re.findall(r"\bgo\.([A-Z]\w*)\(", source)} - {"figure", "frame"}
    assert made and made <= set(spec["data"]), made


def test_a_very_long_token_is_cut_in_its_label_and_whole_in_the_hover():
    """A 300-character token (a checkpoint's, or a URL typed as one word) would take the figure's
    width for its label and squeeze the cells to nothing."""
    long = "W" * 300
    al = make_alignment(["the", "cat"], [long, "ok"])
    fig = alignment_heatmap(al)
    label = fig.layout.yaxis.ticktext[0]
    assert len(label) == 40 and label.endswith("…") and label.startswith("W" * 39)
    assert long in hover_strings(fig)  # the cell's hover names it whole
    assert fig.layout.margin.l < 400  # room for 40 characters, not 300
    short = alignment_heatmap(make_alignment(["the", "cat"], ["W" * 40, "ok"]))
    assert short.layout.margin.l == fig.layout.margin.l  # a label of 40 characters needs the same room
    assert display_tokens(["<" * 50])[0] == "&lt;" * 39 + "…"  # cut before it is escaped


def test_a_direction_override_in_a_token_is_shown_as_its_code_point():
    """U+202E in a label would draw the rest of it backwards ("safe‮exe.txt" read as "safetxt.exe")."""
    assert display_tokens(["safe\u202eexe.txt", "\u2067x\u2069", "\u200fשלום"]) == [
        "safe[U+202E]exe.txt",
        "[U+2067]x[U+2069]",
        "\u200fשלום",  # a right-to-left word and its plain mark stay as they are
    ]
