"""The tokenizer with subword pieces: the typed case kept, a round trip through a dict."""

from __future__ import annotations

import pytest

from attnviz.data.bpe import BPE
from attnviz.data.tokenize import Tokenizer
from attnviz.errors import CheckpointError, ConfigError


@pytest.fixture
def subword_tokenizer() -> Tokenizer:
    words = ["the", "orange", "hat", "and", "the", "orange", "coat", "and", "the", "hats"] * 3
    return Tokenizer("word", lowercase=True, bpe=BPE.learn(words, 12))


def test_tokenizer_pieces_keep_the_typed_case(subword_tokenizer):
    text = "Orangefarbenen Hats, bitte!"
    surface, vocab_forms = subword_tokenizer.split(text), subword_tokenizer.tokenize(text)
    assert len(surface) == len(vocab_forms) > 4
    assert [subword_tokenizer.normalize(t) for t in surface] == vocab_forms
    assert subword_tokenizer.cut(text) == (surface, vocab_forms)
    assert Tokenizer().cut("Der Hut.") == (["Der", "Hut", "."], ["der", "hut", "."])
    assert "".join(t.removesuffix("@@") for t in surface) == "OrangefarbenenHats,bitte!"
    assert subword_tokenizer.detokenize(vocab_forms) == "orangefarbenen hats, bitte!"


def test_tokenizer_round_trips_through_a_dict(subword_tokenizer):
    saved = subword_tokenizer.to_dict()
    assert Tokenizer.from_dict(saved) == subword_tokenizer
    assert subword_tokenizer.describe() == {"kind": "word", "lowercase": True, "subword_merges": 12}
    assert "merges" not in Tokenizer().to_dict()
    with pytest.raises(CheckpointError, match="merges"):
        Tokenizer.from_dict({**saved, "merges": [["a"]]})
    with pytest.raises(ConfigError, match="word tokenizer"):
        Tokenizer("char", bpe=BPE([]))


def test_given_words_are_cut_inside_and_join_back(subword_tokenizer):
    from attnviz.data.bpe import join_pieces, word_spans
    from attnviz.errors import InputError

    words = ["Mr.", "Orangehats", "l'homme", "\x07", "!"]
    surface, forms = subword_tokenizer.cut_words(words)
    assert join_pieces(surface) == words  # each given word's tokens join back into it, never across words
    assert len({span for span in word_spans(surface)}) == len(words)
    first = surface.index(".") + 1  # "Mr." is the tokenizer's "mr" and "." (and pieces), inside the one word
    assert (
        join_pieces(surface[:first]) == ["Mr."]
        and forms[first - 1] == "."
        and join_pieces(forms[: first - 1]) == ["mr"]
    )
    assert forms[surface.index("\x07")] == "<unk>"  # a word the tokenizer keeps nothing of: <unk>, not an error
    with pytest.raises(InputError, match="ends with @@"):
        subword_tokenizer.cut_words(["orange@@", "hat"])
    with pytest.raises(InputError, match="reads characters"):
        Tokenizer("char").cut_words(["a"])
