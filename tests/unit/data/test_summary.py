"""DataFrame view and summary of a corpus."""

from __future__ import annotations

from attnviz.data import Vocab, load_corpus, pairs_frame, summarize


def test_pairs_frame_with_and_without_gold(tmp_path):
    corpus = load_corpus("reverse", n_train=20, n_valid=5, n_test=5)
    frame = pairs_frame(corpus.train)
    assert list(frame.columns) == ["source", "target", "source_len", "target_len", "sure_links", "possible_links"]
    assert len(frame) == 20 and (frame.source_len == frame.sure_links).all()
    path = tmp_path / "pairs.csv"
    path.write_text("a,b\n" + "".join(f"word{i} x,mot{i}\n" for i in range(10)))
    plain = pairs_frame(load_corpus(f"{path}?src=a&tgt=b", n_valid=1, n_test=1).train)
    assert plain.sure_links.isna().all() and (plain.source_len == 2).all()
    assert pairs_frame([]).empty


def test_summarize_counts_lengths_vocab_and_unknown_rate():
    corpus = load_corpus("toy-fr", n_train=300, n_valid=40, n_test=30, seed=1)
    summary = summarize(corpus)
    assert summary["pairs"] == {"train": 300, "valid": 40, "test": 30}
    assert summary["has_gold"] and summary["name"] == "toy-fr"
    lengths = summary["source_length"]["train"]
    assert 1 <= lengths["min"] <= lengths["median"] <= lengths["p95"] <= lengths["max"]
    assert summary["source_vocab_size"] == len({t for p in corpus.train for t in p.source_tokens})
    assert 0 <= summary["valid_source_unknown_rate"] < 0.2
    specials_only = Vocab.build([])
    assert summarize(corpus, specials_only, specials_only)["valid_target_unknown_rate"] == 1.0
