"""Markup carried by a model (tiny reversing model): its translation or a given one, links by every kind of
method (attention, both directions, eflomal), and the models it refuses."""

from __future__ import annotations

import dataclasses

import pytest

from attnviz.data import Tokenizer
from attnviz.errors import InputError
from attnviz.links import align_words, eflomal_sample, parse_markup, translate_markup

TOY_DATA = {"data": "toy-fr", "data_options": {"n_train": 30, "n_valid": 2, "n_test": 2, "seed": 0}}


def test_the_models_translation_carries_the_markup_along_its_attention(trained):
    result = translate_markup(trained, "a <b>b c</b> d<br/>")
    assert result.plain_source == "a b c d" and result.source_words == ["a", "b", "c", "d"]
    assert result.translation == trained.text_of(trained.translate("a b c d"))
    links = align_words(trained, ["a", "b", "c", "d"], result.target_words).links
    assert result.links == links and result.method == "argmax"
    targets = sorted(j for i, j in links if i in (1, 2))
    assert result.spans[0].target_words == (targets[0], targets[-1] + 1)
    again = parse_markup(result.marked_translation)
    assert again.plain == result.translation and sorted(el.label for el in again.elements) == ["<b>", "<br/>"]


def test_a_given_translation_and_every_kind_of_method(trained):
    result = translate_markup(trained, "a <i>b</i> c d", target="d c b a")
    assert result.target_words == ["d", "c", "b", "a"] and result.translation == "d c b a"
    if (1, 2) in result.links:
        assert result.marked_translation == "d c <i>b</i> a"
    for method in ("dtw", "threshold"):
        assert translate_markup(trained, "a <i>b</i> c d", method, target="d c b a").method == method
    both = translate_markup(trained, "a <i>b</i> c d", "grow-diag-final", trained, target="d c b a")
    assert both.links == align_words(trained, "a b c d", "d c b a", "grow-diag-final", trained).links
    with pytest.raises(InputError, match="reverse model"):
        translate_markup(trained, "a <i>b</i> c d", "union", target="d c b a")


def test_eflomal_links_from_the_models_own_data(trained):
    pytest.importorskip("eflomal", reason="eflomal is not installed (pip install eflomal==2.0.0)")
    toy = dataclasses.replace(trained, meta={"recipe_full": TOY_DATA})
    sample = eflomal_sample(toy)
    assert len(sample) == 30 and all(src == [w.lower() for w in src] for src, _ in sample)
    result = translate_markup(trained, "a <b>b</b> c", "eflomal", target="c b a", sample=sample[:10])
    assert result.method == "eflomal" and all(0 <= i < 3 and 0 <= j < 3 for i, j in result.links)
    assert parse_markup(result.marked_translation).plain == "c b a"


def test_models_and_input_it_cannot_carry_markup_with(trained):
    chars = dataclasses.replace(trained, src_tokenizer=Tokenizer("char"))
    with pytest.raises(InputError, match="reads characters"):
        translate_markup(chars, "a <b>b</b>")
    with pytest.raises(InputError, match="unknown method"):
        translate_markup(trained, "a <b>b</b>", "fast-align")
    with pytest.raises(InputError, match="translation given is empty"):
        translate_markup(trained, "a <b>b</b>", target="  ")
