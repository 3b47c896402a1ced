"""Data specs: a pair over the length cap is dropped with a note before training."""

from __future__ import annotations

import pytest

from attnviz.data.spec import LONGEST_SOURCE, MAX_TOKENS, load_corpus
from attnviz.errors import ConfigError
from tests.support.tables import PAIRS


def test_an_over_long_pair_is_dropped_with_a_note_before_training(tmp_path):
    long_row = (" ".join(["wort"] * 2500), "a long one")
    path = tmp_path / "pairs.tsv"
    path.write_text("de\ten\n" + "".join(f"{d}\t{e}\n" for d, e in [*PAIRS, long_row]), encoding="utf-8")
    corpus = load_corpus(f"{path}?src=de&tgt=en")
    assert len(corpus) == len(PAIRS)
    assert any(f"dropped 1 pairs outside 1..{MAX_TOKENS} tokens" in note for note in corpus.notes)
    with pytest.raises(ConfigError, match=f"max_len must be between 1 and {LONGEST_SOURCE}"):
        load_corpus(f"{path}?src=de&tgt=en", max_len=2500)
