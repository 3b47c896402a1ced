"""Multi30k's tokens kept on disk: reused, missed when the text changes, a torn file never read,
concurrent readers and writers, a folder that cannot be written, never inside pretrained/."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from attnviz.data import load_corpus, token_cache
from attnviz.data.token_cache import CACHE_ENV, read_tokens, tokenize_texts, write_tokens
from attnviz.data.tokenize import Tokenizer
from attnviz.errors import ConfigError
from tests.support.multi30k import LINES, multi30k_folder, write

TEXTS = ["Ein Hund rennt.", "", "Zwei Männer\x00reden -- l'homme!", "ΣΑΣ İstanbul", "e\u0301"]


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    return folder


@pytest.fixture
def m30k(tmp_path) -> Path:
    return multi30k_folder(tmp_path / "m30k")


def splits(corpus) -> list:
    return [[p.to_dict() for p in corpus.split(k)] for k in ("train", "valid", "test")] + [corpus.notes]


def not_called(*args, **kwargs):
    raise AssertionError("tokenized again: the cache was not used")


def test_tokens_are_stored_then_read_back_instead_of_tokenized(cache, monkeypatch):
    tokenizers = (Tokenizer(), Tokenizer(lowercase=False), Tokenizer("char"))
    expected = {tokenizer: [tokenizer.tokenize(t) for t in TEXTS] for tokenizer in tokenizers}
    for tokenizer in tokenizers:
        assert tokenize_texts(TEXTS, tokenizer) == expected[tokenizer]
    assert len(list(cache.glob("*.tokens"))) == 3  # one file per tokenizer
    monkeypatch.setattr(Tokenizer, "tokenize", not_called)
    for tokenizer in tokenizers:
        assert tokenize_texts(TEXTS, tokenizer) == expected[tokenizer]
    assert tokenize_texts([], Tokenizer()) == []


def test_a_changed_file_misses_and_is_tokenized_afresh(cache, m30k):
    before = load_corpus(f"multi30k-de-en@{m30k}")
    stored = set(cache.glob("*.tokens"))
    assert stored
    write(m30k / "train.de.gz", ["Ein Vogel singt.", *LINES["de"][1:4]])
    after = load_corpus(f"multi30k-de-en@{m30k}")
    assert after.train[0].source_tokens == ["ein", "vogel", "singt", "."]
    assert splits(after)[1:] == splits(before)[1:] and after.train[1:] == before.train[1:]
    assert set(cache.glob("*.tokens")) > stored  # the new text has its own file; the old one is not read


@pytest.mark.parametrize("damage", ["empty", "half", "no footer", "flipped byte", "longer", "other magic"])
def test_a_torn_or_altered_cache_file_is_ignored_and_rebuilt(cache, m30k, damage):
    spec = f"multi30k-de-en@{m30k}"
    expected = splits(load_corpus(spec))
    files = sorted(cache.glob("*.tokens"))
    for path in files:
        data = path.read_bytes()
        path.write_bytes(
            {
                "empty": b"",
                "half": data[: len(data) // 2],
                "no footer": data[:-48],
                "flipped byte": data[:20] + bytes([data[20] ^ 1]) + data[21:],
                "longer": data + b"x",
                "other magic": b"attnviz tokens 0" + data[16:],
            }[damage]
        )
    assert splits(load_corpus(spec)) == expected
    assert sorted(cache.glob("*.tokens")) == files
    for path in files:  # each was rebuilt whole and reads back again
        data = path.read_bytes()
        assert read_tokens(path, int.from_bytes(data[-40:-32], "little")) is not None


def test_a_file_with_another_number_of_texts_is_not_used(cache):
    path = cache / "x.tokens"
    assert write_tokens(path, [["a"], ["b", "c"]])
    assert read_tokens(path, 2) == [["a"], ["b", "c"]]
    assert read_tokens(path, 3) is None and read_tokens(cache / "missing.tokens", 2) is None


def test_tokens_the_layout_cannot_hold_are_not_stored(cache):
    assert not write_tokens(cache / "sep.tokens", [["a\x1fb"]])
    assert not write_tokens(cache / "empty.tokens", [[""]])
    assert not list(cache.glob("*.tokens"))


def test_concurrent_readers_and_writers_see_whole_files(cache):
    texts = [f"Satz {i} mit ein paar Wörtern, bitte." for i in range(2000)]
    expected = [Tokenizer().tokenize(t) for t in texts]
    stop = threading.Event()

    def rewrite() -> None:  # another process storing the same tokens over and over
        path = cache / f"{token_cache._key(texts, Tokenizer())}.tokens"
        while not stop.is_set():
            write_tokens(path, expected)

    writer = threading.Thread(target=rewrite)
    writer.start()
    try:
        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(lambda _: tokenize_texts(texts, Tokenizer()), range(40)))
    finally:
        stop.set()
        writer.join()
    assert all(r == expected for r in results)
    assert not list(cache.glob(".*.tmp"))  # every temporary file was renamed into place


def test_a_folder_that_cannot_be_written_works_without_cache(tmp_path, monkeypatch, m30k):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(CACHE_ENV, str(blocker / "cache"))
    expected = [Tokenizer().tokenize(t) for t in TEXTS]
    assert tokenize_texts(TEXTS, Tokenizer()) == expected
    assert len(load_corpus(f"multi30k-de-en@{m30k}").train) == 4


def test_the_default_folder_is_the_users_cache_and_never_pretrained(tmp_path, monkeypatch):
    monkeypatch.delenv(CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert token_cache.cache_dir() == (tmp_path / "attnviz" / "corpora").resolve()
    monkeypatch.setenv("ATTNVIZ_PRETRAINED", str(tmp_path / "shipped"))
    for inside in (tmp_path / "shipped" / "cache", token_cache._SHIPPED / "cache"):
        monkeypatch.setenv(CACHE_ENV, str(inside))
        with pytest.raises(ConfigError, match=f"shipped models' folder.*point {CACHE_ENV}"):
            tokenize_texts(TEXTS, Tokenizer())


def test_temporary_files_of_a_killed_writer_are_never_read_and_swept_when_old(cache):
    cache.mkdir()
    old, fresh = cache / ".old.tmp", cache / ".fresh.tmp"
    for temp in (old, fresh):
        temp.write_bytes(b"attnviz tokens 1\nhalf a fi")
    stale = time.time() - token_cache.STALE_TEMP_SECONDS - 60
    os.utime(old, (stale, stale))
    assert tokenize_texts(TEXTS, Tokenizer()) == [Tokenizer().tokenize(t) for t in TEXTS]
    assert not old.exists() and fresh.exists()  # a fresh one may belong to a writer still running
