"""Where guided training's links come from: a Pharaoh file (word links become piece links), gold,
eflomal and its cache; bad files and settings are errors. The files a training reads by path (links,
recipes) are checked before they are read: a pipe, a device, a folder or a huge file is refused."""

import os
import re
from pathlib import Path

import pytest

from attnviz.data.pairs import Corpus, Pair, make_pair
from attnviz.data.tokenize import Tokenizer
from attnviz.errors import ConfigError, DataError
from attnviz.training import guided_links
from attnviz.training.guided_links import GuidedConfig, training_links
from attnviz.training.recipes import Recipe
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
        ("0-0 1-1\n", r"links.txt line 2: the file has 1 line for 2 training pairs"),
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


READERS = {  # the files a training reads by path, each through read_text_file
    "links": (DataError, "links file", lambda path: guided_links.read_links(path, [(2, 2)])),
    "recipe": (ConfigError, "recipe file", Recipe.from_file),
}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_a_training_file_that_is_not_a_regular_file_is_refused_unread(tmp_path, reader, kind):
    error, what, read = READERS[reader]
    path = tmp_path / "given"
    {"fifo": os.mkfifo, "device": lambda p: p.symlink_to("/dev/zero"), "folder": os.mkdir}[kind](path)
    found = rf"is a folder, not a {what}" if kind == "folder" else "is not a regular file"
    with pytest.raises(error, match=rf"^{re.escape(str(path))} {found}"):
        read(path)  # a pipe with no writer would block here, /dev/zero fill memory


@pytest.mark.parametrize("reader", READERS)
def test_a_sparse_training_file_over_the_limit_is_refused_unread(tmp_path, monkeypatch, reader):
    error, what, read = READERS[reader]
    path = tmp_path / "sparse"
    with path.open("wb") as f:
        f.truncate(2 * 2**30)  # 2 GB of holes: reading it would take 2 GB
    monkeypatch.setattr("pathlib.Path.open", lambda *a, **k: pytest.fail("read a file over the limit"))
    with pytest.raises(error, match=rf"sparse is over the \d+ MB a {what} may take"):
        read(path)


@pytest.mark.parametrize("reader", READERS)
def test_a_training_file_that_is_not_utf8_or_unreadable_says_so(tmp_path, monkeypatch, reader):
    error, _, read = READERS[reader]
    path = tmp_path / "latin1"
    path.write_bytes(b'{"name": "caf\xe9"}\n')
    with pytest.raises(error, match=r"latin1: not UTF-8 text \(invalid continuation byte at byte 13\); save it as"):
        read(path)

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("pathlib.Path.open", refused)
    with pytest.raises(error, match=r"cannot read .*latin1 \(Permission denied\)"):
        read(path)


def test_a_links_file_with_a_byte_order_mark_is_read(tmp_path):
    path = tmp_path / "links.txt"
    path.write_bytes("\ufeff0-0 1-1\n".encode())
    assert guided_links.read_links(path, [(2, 2)]) == [[(0, 0), (1, 1)]]


def test_a_links_cache_that_cannot_be_written_only_costs_time(tmp_path):
    pytest.importorskip("eflomal")
    corpus = Corpus("tiny", [make_pair("ein hund", "a dog", WORD, WORD)] * 6, [], [], WORD, WORD, False, [])
    (tmp_path / "file").write_text("in the way")
    links, source = training_links(corpus, GuidedConfig(), tmp_path / "file")  # not a folder
    assert len(links) == 6 and source == "eflomal" and (tmp_path / "file").read_text() == "in the way"
