"""Pairs and corpora: Pharaoh lines, split names."""

from __future__ import annotations

import pytest

from attnviz.data import load_corpus, to_pharaoh
from attnviz.errors import ConfigError


def test_links_as_a_pharaoh_line():
    assert to_pharaoh([(0, 1), (2, 0), (10, 3)]) == "0-1 2-0 10-3"


def test_split_names_and_unknown_spec():
    corpus = load_corpus("copy", n_train=60, n_valid=10, n_test=10, seed=0)
    assert corpus.split("val") is corpus.valid and corpus.split("validation") is corpus.valid
    with pytest.raises(ConfigError, match="train, valid or test"):
        corpus.split("dev2")
    with pytest.raises(ConfigError, match="unknown data spec"):
        load_corpus("no-such-task")
