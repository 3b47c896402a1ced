"""Vocabularies: ``max_size`` keeps the most frequent tokens (ties alphabetical, the specials counted),
settings that cannot build one are refused, and a saved vocabulary that is not one says how to rebuild it."""

from __future__ import annotations

import pytest

from attnviz.data.vocab import SPECIALS, Vocab
from attnviz.errors import CheckpointError, ConfigError

SENTENCES = [["a", "a", "b", "c", "c", "c", "d"], ["d", "e"]]


def test_max_size_keeps_the_most_frequent_tokens_with_ties_broken_alphabetically():
    """c (3), then a and d (2 each, a first): a cap of 6 keeps the four specials, c and a."""
    assert Vocab.build(SENTENCES, 1, 6).itos == [*SPECIALS, "c", "a"]
    assert Vocab.build(SENTENCES, 1, 7).itos == [*SPECIALS, "c", "a", "d"]
    assert Vocab.build(SENTENCES).itos == [*SPECIALS, "c", "a", "d", "b", "e"]  # no cap: every token
    assert Vocab.build(SENTENCES, 1, 100) == Vocab.build(SENTENCES)  # a cap above the count changes nothing
    assert Vocab.build(SENTENCES, 2).itos == [*SPECIALS, "c", "a", "d"]  # seen at least twice


def test_max_size_counts_the_special_tokens_and_never_keeps_one_twice():
    vocab = Vocab.build([["<pad>", "<eos>", "x", "x", "y"]], 1, 5)
    assert vocab.itos == [*SPECIALS, "x"] and len(vocab) == 5


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"min_freq": 0}, "min_freq must be at least 1, got 0"),
        (
            {"max_size": 4},
            "max_vocab (--max-vocab) must be 5 or more, as 4 places go to <pad>, <unk>, <bos>, <eos>; got 4",
        ),
        (
            {"max_size": 0},
            "max_vocab (--max-vocab) must be 5 or more, as 4 places go to <pad>, <unk>, <bos>, <eos>; got 0",
        ),
    ],
)
def test_settings_that_cannot_build_a_vocabulary_are_refused(options, message):
    with pytest.raises(ConfigError) as info:
        Vocab.build(SENTENCES, **options)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("tokens", "message"),
    [
        (["<unk>", "<pad>", "<bos>", "<eos>", "a"], "must start with ['<pad>', '<unk>', '<bos>', '<eos>']"),
        (["<pad>", "<unk>"], "this one starts with ['<pad>', '<unk>']"),
        ([*SPECIALS, "a", "b", "a"], "lists a token twice"),
        ([*SPECIALS, "a", 5], "must be a list of strings"),
        ("<pad> <unk> <bos> <eos>", "must be a list of strings"),
        ({"itos": list(SPECIALS)}, "must be a list of strings"),
    ],
)
def test_a_saved_vocabulary_that_is_not_one_is_a_checkpoint_error(tokens, message):
    """A checkpoint's vocabulary with the specials out of place, a token twice, or not a list of strings:
    a CheckpointError saying so (and, for the first two, to rebuild it), never a vocabulary that maps
    ids to the wrong tokens."""
    with pytest.raises(CheckpointError, match="vocabulary") as info:
        Vocab.from_list(tokens)
    assert message in str(info.value)
    if "twice" in message or "start with" in message:
        assert "Rebuild it with Vocab.build" in str(info.value) or "rebuild it with Vocab.build" in str(info.value)


def test_a_saved_vocabulary_round_trips():
    vocab = Vocab.build(SENTENCES, 1, 6)
    assert Vocab.from_list(vocab.to_list()) == vocab


@pytest.mark.parametrize("token", ["\x1b[31mred\x1b[0m", "two\nlines", "tab\there", "nel\x85", "sep\u2028arator"])
def test_a_token_with_a_control_character_is_refused_naming_it(token):
    """attnviz's tokenizers never make one; from a file it would reach a terminal as an escape, or
    split one output line in two."""
    with pytest.raises(CheckpointError, match=r"vocabulary token 5, .* control character") as caught:
        Vocab([*SPECIALS, "a", token])
    assert ascii(token)[:20] in str(caught.value) and "\x1b" not in str(caught.value)


def test_spaces_and_direction_marks_stay_tokens():
    """A character model's space, and a right-to-left word's marks, are text, not controls."""
    assert Vocab([*SPECIALS, " ", "\u200fשלום", "🙂"]).itos[4:] == [" ", "\u200fשלום", "🙂"]
