"""Multi30k's files: lines split as ``datasets`` splits them, and one split read alone with the
pairs a load of every split gives it."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from attnviz.data import corpora, load_corpus
from attnviz.data.multi30k import reads_alone, text_lines
from attnviz.errors import ConfigError, DataError
from tests.support.multi30k import LINES, multi30k_folder, write

TRICKY = [
    b"",
    b"\n",
    b"\n\n",
    b"one",
    b"one\ntwo\n",
    b"one\r\ntwo\rthree\n\rfour\r\r\n",
    b"\r",
    b"trailing\r",
    b"\xef\xbb\xbfbom\n",
    "next\x85line\u2028sep\u2029par\x0bvt\x0cff\x1cfs\x1dgs\x1ers end\n".encode(),
    b"tab\tand  spaces  \n   \n",
    b"a\x00nul\n",
]


@pytest.fixture
def m30k(tmp_path) -> Path:
    return multi30k_folder(tmp_path / "m30k")


def test_lines_are_split_as_the_datasets_text_builder_splits_them(tmp_path):
    files = {}
    for i, data in enumerate(TRICKY):
        if data:  # datasets makes no table of an empty file
            files[f"f{i}"] = tmp_path / f"f{i}.txt.gz"
            files[f"f{i}"].write_bytes(gzip.compress(data))
    read = corpora.load_files("text", {k: str(p) for k, p in files.items()}, cache_dir=str(tmp_path / "hf"))
    for key, path in files.items():
        assert text_lines(gzip.decompress(path.read_bytes())) == list(read[key]["text"]), key
    assert text_lines(b"") == []


def dicts(pairs) -> list[dict]:
    return [p.to_dict() for p in pairs]


@pytest.mark.parametrize(
    "options",
    [{}, {"target_lowercase": False}, {"n_test": 1, "n_valid": 1, "n_train": 2, "seed": 3}, {"subwords": 5}],
)
def test_one_split_alone_has_the_pairs_of_a_full_load(m30k, options):
    spec = f"multi30k-de-en@{m30k}"
    full = load_corpus(spec, **options)
    for split in ("train", "valid", "test"):
        alone = load_corpus(spec, **options, split=split)
        assert dicts(alone.split(split)) == dicts(full.split(split))
        assert [len(alone.split(k)) for k in ("train", "valid", "test") if k != split] == [0, 0]
        assert alone.source_tokenizer == full.source_tokenizer and alone.target_tokenizer == full.target_tokenizer


def test_a_split_with_files_of_its_own_is_read_without_train(m30k):
    (m30k / "train.de.gz").write_bytes(b"not gzip")
    spec = f"multi30k-de-en@{m30k}"
    assert [p.source for p in load_corpus(spec, split="test").test] == LINES["de"][5:]
    assert [p.source for p in load_corpus(spec, split="val").valid] == LINES["de"][4:5]
    with pytest.raises(DataError, match=r"train\.de\.gz is not a readable gzip file"):
        load_corpus(spec)
    with pytest.raises(DataError, match=r"train\.de\.gz is not a readable gzip file"):
        load_corpus(spec, split="test", subwords=5)  # merges are learned on train


def test_a_split_cut_from_train_is_the_one_a_full_load_cuts(tmp_path):
    for lang in ("de", "en"):
        write(tmp_path / f"train.{lang}.gz", LINES[lang] * 3)
        write(tmp_path / f"test_2016_flickr.{lang}.gz", LINES[lang][:2])
    spec = f"multi30k-de-en@{tmp_path}"
    assert reads_alone("de", "en", tmp_path, "test") and not reads_alone("de", "en", tmp_path, "valid")
    assert not reads_alone("de", "en", tmp_path, "train")  # valid is cut from it
    full = load_corpus(spec, n_valid=2)
    for split in ("train", "valid", "test"):
        assert dicts(load_corpus(spec, n_valid=2, split=split).split(split)) == dicts(full.split(split))


def test_split_names_and_other_sources(m30k):
    assert load_corpus(f"multi30k-de-en@{m30k}", split="validation").valid
    with pytest.raises(ConfigError, match="unknown split 'dev'; choose train, valid or test"):
        load_corpus(f"multi30k-de-en@{m30k}", split="dev")
    sizes = {"n_train": 50, "n_valid": 10, "n_test": 10}
    alone = load_corpus("copy", **sizes, split="test")  # a generated task: made whole, then emptied
    assert dicts(alone.test) == dicts(load_corpus("copy", **sizes).test) and not alone.train and not alone.valid


def test_an_installed_package_without_a_folder_set_says_none_is_set(tmp_path, monkeypatch):
    monkeypatch.delenv("ATTNVIZ_MULTI30K", raising=False)
    monkeypatch.setattr("attnviz.data.multi30k._IN_CHECKOUT", False)
    monkeypatch.setattr("attnviz.data.multi30k._BESIDE_CHECKOUT", tmp_path / "site-packages" / ".." / "shared")
    with pytest.raises(DataError, match=r"^no Multi30k folder is set \(an installed package has none beside it\)"):
        load_corpus("multi30k-de-en")
    monkeypatch.setattr("attnviz.data.multi30k._IN_CHECKOUT", True)  # a checkout names the folder it looked in
    with pytest.raises(DataError, match=r"^Multi30k folder .*shared does not exist; name the folder"):
        load_corpus("multi30k-de-en")
