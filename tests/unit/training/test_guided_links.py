"""Where guided training's links come from: a Pharaoh file (word links become piece links), gold,
eflomal and its cache; bad files and settings are errors."""

from pathlib import Path

import pytest

from attnviz.data.pairs import Corpus, Pair, make_pair
from attnviz.data.tokenize import Tokenizer
from attnviz.errors import ConfigError, DataError
from attnviz.training import guided_links
from attnviz.training.guided_links import GuidedConfig, training_links
from tests.support.tiny import WORD

BPE_WORDS = Tokenizer("word", lowercase=True)


def _subword_corpus() -> Corpus:
    """Two pairs whose source words are cut into pieces (as ``subwords`` would)."""
    pairs = [
        Pair("Xylophon spielt", "xylophone plays", ["xylo@@", "phon", "spielt"], ["xylophone", "plays"]),
        Pair("Ein Hund", "a dog", ["ein", "hu@@", "n@@", "d"], ["a", "dog"]),
    ]
    return Corpus("pieces", pairs, [], [], BPE_WORDS, BPE_WORDS, False, [])


def test_a_links_file_gives_word_links_that_become_piece_links(tmp_path):
    path = tmp_path / "links.txt"
    path.write_text("0-0 1-1\n0-0 1-1\n")
    links, source = training_links(_subword_corpus(), GuidedConfig(links=str(path)))
    assert source == str(path)
    assert links == [[(0, 0), (1, 0), (2, 1)], [(0, 0), (1, 1), (2, 1), (3, 1)]]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0-0 1-1\n", r"links.txt line 2: the file has 1 lines for 2 training pairs"),
        ("0-0 1-1\n0-0\n0-0\n", r"links.txt line 3: the file has 3 lines for 2 training pairs"),
        ("0-0 1-1\n0-0 2-1\n", r"links.txt line 2: link 2-1 is outside its pair's 2 source and 2 target words"),
        ("0-0 1-1\n0-0 x\n", r"links.txt line 2: 'x' is not a Pharaoh link"),
    ],
)
def test_a_bad_links_file_is_an_error_naming_the_line(tmp_path, text, message):
    path = tmp_path / "links.txt"
    path.write_text(text)
    with pytest.raises(DataError, match=message):
        training_links(_subword_corpus(), GuidedConfig(links=str(path)))


def test_missing_links_and_unknown_settings_are_config_errors(tmp_path):
    with pytest.raises(DataError, match="no links file at"):
        training_links(_subword_corpus(), GuidedConfig(links=str(tmp_path / "none.txt")))
    with pytest.raises(ConfigError, match="has no gold links"):
        training_links(_subword_corpus(), GuidedConfig(links="gold"))
    chars = Tokenizer("char")
    dates = Corpus("dates", [make_pair("ab", "ab", chars, chars)], [], [], chars, chars, False, [])
    with pytest.raises(ConfigError, match="character-level and eflomal aligns words"):
        training_links(dates, GuidedConfig())
    for bad in ({"weight": 0}, {"weight": "high"}, {"method": "mean"}, {"links": ""}):
        with pytest.raises(ConfigError):
            GuidedConfig(**bad)


def test_eflomal_links_are_computed_once_and_read_back_from_the_cache(tmp_path, monkeypatch):
    pytest.importorskip("eflomal")
    sentences = [
        ("ein hund läuft", "a dog runs"),
        ("eine katze läuft", "a cat runs"),
        ("ein hund", "a dog"),
        ("die katze schläft", "the cat sleeps"),
        ("der hund schläft", "the dog sleeps"),
    ] * 4
    corpus = Corpus("tiny", [make_pair(s, t, WORD, WORD) for s, t in sentences], [], [], WORD, WORD, False, [])
    links, source = training_links(corpus, GuidedConfig(), tmp_path)
    assert Path(source).parent == tmp_path and Path(source).name.startswith("eflomal-grow-diag-final-and-")
    assert len(links) == len(sentences) and all(links)
    assert (0, 0) in links[0]  # ein - a

    def no_second_run(*args, **kwargs):
        raise AssertionError("eflomal ran again")

    monkeypatch.setattr(guided_links, "run_eflomal", no_second_run)
    assert training_links(corpus, GuidedConfig(), tmp_path) == (links, source)
    corpus.train[0] = make_pair("ein hund rennt", "a dog runs", WORD, WORD)  # other words: another cache entry
    with pytest.raises(AssertionError, match="eflomal ran again"):
        training_links(corpus, GuidedConfig(), tmp_path)
