"""The yardstick helpers behind the Alignment view: reverse tasks and models, gold from pairs and
uploads, score tables, agreement."""

from __future__ import annotations

from dataclasses import replace

import pytest

from attnviz.data.pairs import Pair
from attnviz.errors import DataError
from attnviz.links.yardstick import (
    SAMPLE_PAIRS,
    agreement,
    gold_of_pairs,
    gold_of_upload,
    reverse_entry,
    reverse_task,
    score_table,
    training_sample,
    word_pairs,
)
from attnviz.store import ModelEntry


def test_reverse_task_and_model():
    assert reverse_task("multi30k-de-en") == "multi30k-en-de" and reverse_task("toy-fr") is None
    assert reverse_task("dates") is None
    models = [
        ModelEntry("a", "a", "pretrained", "multi30k-en-de", "dot", "luong"),
        ModelEntry("b", "b", "pretrained", "multi30k-en-de", "additive", "bahdanau"),
    ]
    entry = ModelEntry("de-en", "de-en", "pretrained", "multi30k-de-en", "additive", "bahdanau")
    assert reverse_entry(models, entry).name == "b"
    assert reverse_entry(models, replace(entry, score="general")).name == "a"
    assert reverse_entry(models, replace(entry, task="toy-fr")) is None


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
    with pytest.raises(DataError, match="upload the sentences too"):
        gold_of_upload(["0-0"], "g.txt", "pharaoh", False, fallback=pairs)  # 1 line, 2 test pairs
    with pytest.raises(DataError, match=r"has 2 lines but t\.txt has 1"):
        gold_of_upload(["0-0", "0-0"], "g.txt", "pharaoh", False, (["a", "b"], ["x"]), ("s.txt", "t.txt"))
    with pytest.raises(DataError, match=r"g\.txt line 1: link 2-0 has an index equal to its sentence's length"):
        gold_of_upload(["2-0"], "g.txt", "pharaoh", False, (["a b"], ["x y"]))
    with pytest.raises(DataError, match=r"s\.txt line 2: an empty source sentence"):
        gold_of_upload(["0-0", ""], "g.txt", "pharaoh", False, (["a", " "], ["x", "y"]), ("s.txt", "t.txt"))
    with pytest.raises(DataError, match="no gold alignment"):
        gold_of_pairs([_pair("a", "x")], "data")


def test_score_table_puts_aligners_side_by_side():
    gold = gold_of_pairs([_pair("a b", "x y", [(0, 0), (1, 1)]), _pair("c", "z", [(0, 0)])], "t").gold
    corpus, sentences = score_table(gold, {"attention": [[(0, 0)], [(0, 0)]], "eflomal": [[(0, 0), (1, 1)], []]})
    assert [r["aligner"] for r in corpus] == ["attention", "eflomal"]
    assert corpus[0]["precision"] == 1.0 and corpus[0]["recall"] == round(2 / 3, 3)
    assert corpus[1]["AER"] == round(1 - 4 / 5, 3)
    assert sentences[1] == {
        "pair": 1,
        "attention precision": 1.0,
        "attention recall": 1.0,
        "attention AER": 0.0,
        "eflomal precision": 1.0,
        "eflomal recall": 0.0,
        "eflomal AER": 1.0,
    }


def test_agreement_and_word_pairs():
    assert agreement({(0, 0), (1, 1)}, {(0, 0)}) == pytest.approx(2 / 3)
    assert agreement(set(), set()) == 1.0 and agreement({(0, 0)}, set()) == 0.0
    pairs = [Pair("", "", ["Haus@@", "garten"], ["The", "garden"]), Pair("", "", [], ["x"]), Pair("", "", ["a"], ["b"])]
    assert word_pairs(pairs) == [(["hausgarten"], ["the", "garden"]), (["a"], ["b"])]
    assert word_pairs(pairs, 1) == [(["hausgarten"], ["the", "garden"])]


def test_eflomal_learns_from_a_sample_of_the_training_split_loaded_as_that_many(monkeypatch):
    from attnviz.links import yardstick

    asked = []
    real = yardstick.load_corpus
    monkeypatch.setattr(yardstick, "load_corpus", lambda spec, **o: asked.append(o) or real(spec, **o))
    sample = training_sample("toy-fr", {"seed": 3})
    assert len(sample) == SAMPLE_PAIRS and all(src == [w.lower() for w in src] for src, _ in sample)
    assert asked == [{"seed": 3, "n_train": SAMPLE_PAIRS, "n_valid": 0, "n_test": 0, "split": "train"}]
    assert len(training_sample("toy-fr", {"n_train": 40, "n_valid": 5})) == 40  # never more than the model had
