"""Property-based fuzzing (hypothesis) of the Plotly builders: tokens and user-given names are
HTML-escaped in every label and hover, losslessly.

Generated inputs per run (``max_examples``): heatmaps 50, comparison/exploration/data figures 15."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnviz.decoding.trace import Alignment
from attnviz.plots import compare as plots_compare
from attnviz.plots import context as plots_context
from attnviz.plots import data as plots_data
from attnviz.plots import explore as plots_explore
from attnviz.plots import heatmap as plots
from attnviz.plots import steps as plots_steps
from attnviz.plots import whatif as plots_whatif
from tests.support.hostile import file_char

plot_tokens = st.one_of(
    st.sampled_from(["<script>alert(1)</script>", "<b>x</b>", "<", ">", "&", "&lt;", "<br>", "<eos>", "", " ", "a b"]),
    st.text(file_char, max_size=12),  # real tokens never hold lone surrogates
)
ALLOWED_MARKUP = re.compile(r"<br>|</?extra>|</?sub>")  # what the builders write themselves (c<sub>t</sub>)


@st.composite
def alignments(draw: st.DrawFn, n_src: int | None = None, n_tgt: int | None = None) -> Alignment:
    """A valid alignment over hostile tokens; some scores are -inf (a local window) now and then."""
    source = draw(st.lists(plot_tokens, min_size=n_src or 1, max_size=n_src or 6))
    target = draw(st.lists(plot_tokens, min_size=n_tgt or 1, max_size=n_tgt or 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scores = rng.normal(size=(len(target), len(source)))  # [tgt, src]
    local = draw(st.booleans())
    if local:
        scores[:, 1:][rng.random((len(target), len(source) - 1)) < 0.3] = -np.inf
    weights = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    attn = rng.random((1, 2, len(source), len(source)))  # [layers, heads, src, src]
    return Alignment(
        source_tokens=source,
        target_tokens=target,
        weights=weights,
        scores=scores,
        contexts=rng.normal(size=(len(target), 4)),
        states=rng.normal(size=(len(target), 4)),
        source_unknown=draw(st.lists(st.booleans(), min_size=len(source), max_size=len(source))),
        score="local_p" if local else "additive",
        style="luong",
        positions=rng.random(len(target)) * len(source) if local else None,
        window=2 if local else None,
        encoder_attention=attn / attn.sum(axis=-1, keepdims=True),
    )


def strings(obj: object) -> Iterator[str]:
    """Every string inside a figure's JSON."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for value in obj.values():
            yield from strings(value)
    elif isinstance(obj, list | tuple | np.ndarray):
        for value in obj:
            yield from strings(value)


def check_escaped(fig) -> None:
    """No token markup reaches Plotly: only the builders' own ``<br>``/``<extra>`` tags remain."""
    figure = fig.to_plotly_json()
    figure["layout"].pop("template", None)  # Plotly's own theme, no token in it
    for text in strings(figure):
        assert "<script" not in text.lower()
        assert "<" not in ALLOWED_MARKUP.sub("", text), text


def shown(tokens: list[str]) -> list[str]:
    """Tokens as a reader sees them once Plotly unescapes the labels."""
    return [t.replace(" ", "␣") if t else "∅" for t in tokens]


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(alignments(), plot_tokens, st.booleans(), st.sampled_from(["weights", "scores"]), st.integers(0, 5))
def test_plots_escape_tokens(al: Alignment, title: str, hover: bool, values: str, step: int) -> None:
    """Tick labels and hovers of every ``plots`` figure show the tokens escaped, losslessly."""
    fig = plots.alignment_heatmap(al, values, show_gold=[(0, 0)], highlight_step=0, hover=hover, title=title or None)
    check_escaped(fig)
    assert [html.unescape(t) for t in fig.layout.xaxis.ticktext] == shown(al.source_tokens)
    assert [html.unescape(t) for t in fig.layout.yaxis.ticktext] == shown(al.target_tokens)
    check_escaped(plots_steps.step_bar(al, step % len(al.target_tokens)))
    check_escaped(plots_context.context_heatmap(al))
    check_escaped(plots_context.context_projection(al))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), plot_tokens, plot_tokens)
def test_other_plot_modules_escape_tokens(data: st.DataObject, name_a: str, name_b: str) -> None:
    """Comparison, exploration and data figures escape tokens and user-given names too."""
    a = data.draw(alignments())
    b = data.draw(alignments(len(a.source_tokens), len(a.target_tokens)))
    b.source_tokens = a.source_tokens
    names = (name_a, name_b if name_b != name_a else name_a + "2")
    for fig in [
        plots_compare.compare_heatmaps({names[0]: a, names[1]: b}),
        plots_compare.difference_heatmap(a, b, names),
        plots_compare.entropy_plot({names[0]: a, names[1]: b}),
        plots_compare.js_plot(a, b, names),
        plots_compare.encoder_attention_heatmaps(a),
        plots_explore.explore_heatmap(a, title=name_a),
        plots_steps.context_bar(a, 0),
        plots_explore.step_animation(a),
        plots_data.gold_heatmap(a.source_tokens, a.target_tokens, [(0, 0)]),
    ]:
        check_escaped(fig)
    if html.escape(names[0], quote=False) != html.escape(names[1], quote=False):
        check_escaped(plots_whatif.whatif_figure(a, b, [0], names))
