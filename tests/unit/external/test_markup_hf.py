"""Markup carried by a Hugging Face model's cross-attention (a tiny random Marian): the library call and
``attnviz markup`` on the folder."""

from __future__ import annotations

import json

import pytest

from attnviz.errors import InputError
from attnviz.external import Pick, force_words, hf_markup, links_of, load_hf, word_reading
from attnviz.links import parse_markup
from tests.support.cli import run
from tests.support.hf_models import REFERENCE, SOURCE, marian_folder


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return marian_folder(tmp_path_factory.mktemp("marian") / "opus-mt-tiny")


def test_a_chosen_heads_links_carry_the_markup_into_a_given_translation(folder):
    model = load_hf(folder)
    result = hf_markup(model, "the <b>black cat</b> eats<br/> the apple .", Pick(1, 2), target=REFERENCE)
    reading = word_reading(force_words(model, SOURCE.split(), REFERENCE.split()), Pick(1, 2))
    assert result.source_words == reading.source_words and result.target_words == REFERENCE.split()
    assert result.links == sorted(links_of(reading)) and result.method == "argmax, layer 1, head 2"
    again = parse_markup(result.marked_translation)
    assert again.plain == REFERENCE and sorted(el.label for el in again.elements) == ["<b>", "<br/>"]
    with pytest.raises(InputError, match="come from"):
        hf_markup(model, "the <b>cat</b>", method="eflomal")


def test_the_command_reads_a_hugging_face_folder(capsys, folder):
    code, out, _ = run(capsys, "markup", "--model", str(folder), "--layer", "0", "--json", "the <i>cat</i> eats")
    data = json.loads(out)
    assert code == 0 and data["method"] == "argmax, layer 0" and data["spans"][0]["element"] == "<i>"
    code, _, err = run(capsys, "markup", "--model", str(folder), "--method", "eflomal", "the <i>cat</i>")
    assert code == 2 and "Hugging Face" in err
