"""Data specs: a pair over the length cap is dropped with a note before training; a file too small
to cut into splits says how many pairs it needs; a built-in task's generated pairs."""

from __future__ import annotations

import pytest

from attnviz.data.spec import LONGEST_SOURCE, MAX_TOKENS, load_corpus, task_pairs
from attnviz.errors import ConfigError, DataError
from tests.support.tables import PAIRS


def test_an_over_long_pair_is_dropped_with_a_note_before_training(tmp_path):
    long_row = (" ".join(["wort"] * 2500), "a long one")
    path = tmp_path / "pairs.tsv"
    path.write_text("de\ten\n" + "".join(f"{d}\t{e}\n" for d, e in [*PAIRS, long_row]), encoding="utf-8")
    corpus = load_corpus(f"{path}?src=de&tgt=en")
    assert len(corpus) == len(PAIRS)
    assert any(f"dropped 1 pair outside 1..{MAX_TOKENS} tokens" in note for note in corpus.notes)
    with pytest.raises(ConfigError, match=f"max_len must be a whole number between 1 and {LONGEST_SOURCE}, got 2500"):
        load_corpus(f"{path}?src=de&tgt=en", max_len=2500)
    with pytest.raises(ConfigError, match=r"got 12\.5"):
        load_corpus(f"{path}?src=de&tgt=en", max_len=12.5)


def test_a_task_gives_its_seeded_pairs_with_gold_links():
    pairs = task_pairs("reverse", 5, seed=3)
    assert len(pairs) == 5 and pairs == task_pairs("reverse", 5, seed=3)
    assert all(p.target_tokens == p.source_tokens[::-1] and p.sure for p in pairs)
    with pytest.raises(ConfigError, match="unknown task 'dates2'; choose one of dates, toy-fr, copy"):
        task_pairs("dates2", 1)


@pytest.mark.parametrize(("rows", "said"), [(1, "only 1 sentence pair:"), (2, "only 2 sentence pairs:")])
def test_a_file_too_small_for_three_splits_says_how_many_pairs_it_needs(tmp_path, rows, said):
    path = tmp_path / "pairs.tsv"
    path.write_text("de\ten\n" + "".join(f"{d}\t{e}\n" for d, e in PAIRS[:rows]), encoding="utf-8")
    with pytest.raises(DataError, match=f"{said} .* so it needs 3 pairs or more; add pairs"):
        load_corpus(f"{path}?src=de&tgt=en")
    assert len(load_corpus(f"{path}?src=de&tgt=en", n_valid=0, n_test=0).train) == rows


def test_a_file_named_like_a_multi30k_pair_is_a_file_to_every_question(tmp_path, monkeypatch):
    from attnviz.data import is_file_spec, multi30k_pair

    assert multi30k_pair("multi30k-de-en") == ("de", "en", None)
    assert multi30k_pair(" multi30k-en-fr@/data/m30k ") == ("en", "fr", "/data/m30k")
    assert multi30k_pair("multi30k-en-de.csv?src=en&tgt=de") is None
    monkeypatch.chdir(tmp_path)
    (tmp_path / "multi30k-de-en.tsv").write_text(
        "de\ten\n" + "".join(f"{d}\t{e}\n" for d, e in PAIRS), encoding="utf-8"
    )
    spec = "multi30k-de-en.tsv?src=de&tgt=en"
    assert is_file_spec(spec) and len(load_corpus(spec)) == len(PAIRS)  # read as a file, and said to be one
    assert not is_file_spec("multi30k-de-en") and not is_file_spec("dates") and not is_file_spec("hf:x?src=a&tgt=b")


def test_an_unknown_empty_rule_is_refused():
    with pytest.raises(ConfigError, match="empty must be 'drop' or 'error', got 'dorp'"):
        load_corpus("reverse", n_train=10, n_valid=5, n_test=5, empty="dorp")
