"""Pieces merged into words on an Alignment, link figures, and the yardstick helpers behind the Alignment view."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.data.pairs import Pair
from attnviz.decoding.trace import Alignment
from attnviz.errors import DataError, InputError
from attnviz.links.display import for_reading, merged_pieces, without_eos
from attnviz.links.yardstick import (
    agreement,
    gold_of_pairs,
    gold_of_upload,
    reverse_entry,
    reverse_task,
    score_table,
    word_pairs,
)
from attnviz.plots.links import KIND_NAMES, gold_figure, link_kinds, links_figure

SOURCE = ["das", "haus@@", "garten", "<eos>"]
TARGET = ["the", "gar@@", "den", "<eos>"]


def alignment(source=SOURCE, target=TARGET, seed=0) -> Alignment:
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(len(target), len(source)))  # [tgt, src]
    w = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    return Alignment(
        source_tokens=list(source), target_tokens=list(target), weights=w.astype(np.float32), scores=scores,
        contexts=rng.normal(size=(len(target), 3)), states=rng.normal(size=(len(target), 5)),
        source_unknown=[False, True, False, False], score="dot", style="luong",
        token_log_probs=np.log(np.full(len(target), 0.5)),
        encoder_attention=np.full((1, 2, len(source), len(source)), 1 / len(source)),
    )  # fmt: skip


def test_merging_sums_source_columns_and_averages_target_rows():
    al = alignment()
    m = merged_pieces(al)
    assert m.source_tokens == ["das", "hausgarten", "<eos>"] and m.target_tokens == ["the", "garden", "<eos>"]
    w = al.weights.astype(np.float64)
    expected_row = (w[1] + w[2]) / 2  # "garden" = the mean of gar@@ and den
    np.testing.assert_allclose(m.weights[1], [expected_row[0], expected_row[1] + expected_row[2], expected_row[3]],
                               rtol=1e-6)  # fmt: skip
    np.testing.assert_allclose(m.weights.sum(axis=1), 1.0, rtol=1e-6)
    assert m.source_unknown == [False, True, False]  # a word with an unknown piece is unknown
    np.testing.assert_allclose(m.contexts[1], (al.contexts[1] + al.contexts[2]) / 2)
    np.testing.assert_allclose(m.token_log_probs, [np.log(0.5), 2 * np.log(0.5), np.log(0.5)])
    assert m.encoder_attention.shape == (1, 2, 3, 3)
    np.testing.assert_allclose(m.encoder_attention.sum(axis=-1), 1.0)
    softmax = np.exp(m.scores[0]) / np.exp(m.scores[0]).sum()  # log-sum-exp keeps a row's softmax
    np.testing.assert_allclose(softmax, m.weights[0], rtol=1e-5)
    assert al.source_tokens == SOURCE  # the decode itself is untouched


def test_merging_without_pieces_returns_the_alignment_itself():
    al = alignment(["a", "b", "c", "<eos>"], ["x", "y", "z", "<eos>"])
    assert merged_pieces(al) is al
    shown = for_reading(al, hide=False, merge=True)
    assert shown.alignment is al and shown.note == "" and not shown.merged
    assert shown.rule.startswith("Raw attention weights")


def test_reading_options_compose_and_say_so():
    shown = for_reading(alignment(), hide=True, merge=True)
    assert shown.alignment.source_tokens == ["das", "hausgarten"] and shown.merged
    assert shown.note == "pieces merged into words; <eos> hidden, rows renormalised"
    assert "columns summed" in shown.rule and "renormalised" in shown.rule
    np.testing.assert_allclose(shown.alignment.weights.sum(axis=1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("transform", [merged_pieces, without_eos])
def test_an_n_best_list_that_holds_the_decode_itself_is_transformed_once(transform):
    best, other = alignment(), alignment(seed=1)
    best.hypotheses = [best, other]  # beam search lists the best decode first, as itself
    shown = transform(best)
    assert shown.hypotheses[0] is shown
    assert shown.hypotheses[1].source_tokens == shown.source_tokens


def test_link_kinds_follow_the_aer_sets():
    kinds = link_kinds(predicted={(0, 0), (1, 2), (2, 2)}, sure={(0, 0), (1, 1)}, possible={(1, 2)})
    assert kinds == {"sure": [(0, 0), (1, 1)], "possible": [(1, 2)], "hit": [(0, 0), (1, 2)], "wrong": [(2, 2)],
                     "missed": [(1, 1)]}  # fmt: skip


def test_links_figure_draws_each_layer_above_the_heatmap_with_the_legend_outside():
    w = np.array([[0.7, 0.3], [0.1, 0.9], [0.5, 0.5]])
    fig = links_figure(w, ["<b>x</b>", "y"], ["a", "b", "c"], {"attention (argmax)": ("attention", [(0, 0), (1, 1)]),
                       "eflomal": ("eflomal", [(0, 0)])}, title="t <i>")  # fmt: skip
    heat, *layers = fig.data
    assert heat.type == "heatmap" and [t.name for t in layers] == ["attention (argmax)", "eflomal"]
    assert list(layers[0].x) == [0, 1] and list(layers[0].y) == [0, 1]
    assert layers[0].marker.symbol == "circle" and layers[1].marker.symbol == "square-open"
    assert fig.layout.xaxis.ticktext[0] == "&lt;b&gt;x&lt;/b&gt;" and fig.layout.title.text == "t &lt;i&gt;"
    assert fig.layout.legend.y == 1.0 and fig.layout.legend.yanchor == "bottom"  # above the plot area
    assert fig.layout.margin.t >= 46 + 24  # room for the title and a legend row
    with pytest.raises(InputError, match="outside"):
        links_figure(w, ["x", "y"], ["a", "b", "c"], {"bad": ("attention", [(2, 0)])}, "t")
    with pytest.raises(InputError, match="shape"):
        links_figure(w.T, ["x", "y"], ["a", "b", "c"], {}, "t")


def test_gold_figure_gives_each_kind_its_own_symbol_and_only_kinds_that_occur():
    w = np.eye(3)
    fig = gold_figure(w, ["a", "b", "c"], ["x", "y", "z"], predicted=[(0, 0), (2, 1)], sure=[(0, 0), (1, 1)])
    names = [t.name for t in fig.data[1:]]
    assert names == [KIND_NAMES[k] for k in ("sure", "hit", "wrong", "missed")]  # no possible-only link here
    symbols = [t.marker.symbol for t in fig.data[1:]]
    assert len(set(symbols)) == len(symbols)
    narrow = gold_figure(w, ["a", "b", "c"], ["x", "y", "z"], [(0, 0), (2, 1)], [(0, 0), (1, 1)], [(2, 2)],
                         max_width=200)  # fmt: skip
    assert narrow.layout.margin.t > fig.layout.margin.t  # five entries wrap onto more legend rows


def test_reverse_task_and_model():
    assert reverse_task("multi30k-de-en") == "multi30k-en-de" and reverse_task("toy-fr") is None
    assert reverse_task("dates") is None
    models = [
        {"name": "a", "task": "multi30k-en-de", "score": "dot", "style": "luong"},
        {"name": "b", "task": "multi30k-en-de", "score": "additive", "style": "bahdanau"},
    ]
    entry = {"name": "de-en", "task": "multi30k-de-en", "score": "additive", "style": "bahdanau"}
    assert reverse_entry(models, entry)["name"] == "b"
    assert reverse_entry(models, {**entry, "score": "general"})["name"] == "a"
    assert reverse_entry(models, {"task": "toy-fr"}) is None


def _pair(src: str, tgt: str, sure=None, possible=None) -> Pair:
    return Pair(src, tgt, src.split(), tgt.split(), sure, possible)


def test_gold_from_pairs_and_from_uploaded_lines():
    pairs = [_pair("a b", "x y", [(0, 0)], [(0, 0), (1, 1)]), _pair("c", "z", [(0, 0)], [(0, 0)])]
    built_in = gold_of_pairs(pairs, "toy-fr test split")
    assert built_in.gold[0].sure == {(0, 0)} and built_in.gold[0].possible == {(0, 0), (1, 1)}
    assert built_in.lengths == [(2, 2), (1, 1)]
    on_test = gold_of_upload(["0-0 1?1", "0-0"], "g.txt", "pharaoh", False, fallback=pairs)
    assert on_test.sources == [["a", "b"], ["c"]] and on_test.origin == "g.txt on the task's 2 test pairs"
    own = gold_of_upload(["1 1 1 S", "1 2 2 P"], "g.naacl", "naacl", True, (["a b"], ["x y"]))
    assert own.gold[0].sure == {(0, 0)} and own.gold[0].possible == {(0, 0), (1, 1)}
    with pytest.raises(DataError, match="upload the source and target sentence files"):
        gold_of_upload(["0-0"], "g.txt", "pharaoh", False, fallback=pairs)  # 1 line, 2 test pairs
    with pytest.raises(DataError, match=r"has 2 lines but t\.txt has 1"):
        gold_of_upload(["0-0", "0-0"], "g.txt", "pharaoh", False, (["a", "b"], ["x"]), ("s.txt", "t.txt"))
    with pytest.raises(DataError, match=r"g\.txt line 1: link 2-0 is outside"):
        gold_of_upload(["2-0"], "g.txt", "pharaoh", False, (["a b"], ["x y"]))
    with pytest.raises(DataError, match=r"s\.txt line 2: an empty sentence"):
        gold_of_upload(["0-0", ""], "g.txt", "pharaoh", False, (["a", " "], ["x", "y"]), ("s.txt", "t.txt"))
    with pytest.raises(DataError, match="no gold alignment"):
        gold_of_pairs([_pair("a", "x")], "data")


def test_score_table_puts_aligners_side_by_side():
    gold = gold_of_pairs([_pair("a b", "x y", [(0, 0), (1, 1)]), _pair("c", "z", [(0, 0)])], "t").gold
    corpus, sentences = score_table(gold, {"attention": [[(0, 0)], [(0, 0)]], "eflomal": [[(0, 0), (1, 1)], []]})
    assert [r["aligner"] for r in corpus] == ["attention", "eflomal"]
    assert corpus[0]["precision"] == 1.0 and corpus[0]["recall"] == round(2 / 3, 3)
    assert corpus[1]["AER"] == round(1 - 4 / 5, 3)
    assert sentences[1] == {"pair": 1, "attention precision": 1.0, "attention recall": 1.0, "attention AER": 0.0,
                            "eflomal precision": 1.0, "eflomal recall": 0.0, "eflomal AER": 1.0}  # fmt: skip


def test_agreement_and_word_pairs():
    assert agreement({(0, 0), (1, 1)}, {(0, 0)}) == pytest.approx(2 / 3)
    assert agreement(set(), set()) == 1.0 and agreement({(0, 0)}, set()) == 0.0
    pairs = [Pair("", "", ["Haus@@", "garten"], ["The", "garden"]), Pair("", "", [], ["x"]), Pair("", "", ["a"], ["b"])]
    assert word_pairs(pairs) == [(["hausgarten"], ["the", "garden"]), (["a"], ["b"])]
    assert word_pairs(pairs, 1) == [(["hausgarten"], ["the", "garden"])]
