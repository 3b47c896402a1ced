"""eflomal, the yardstick aligner: a clear error when it is missing, a tiny corpus aligned."""

import pytest

from attnviz.data.spec import load_corpus
from attnviz.errors import ConfigError
from attnviz.evaluation import aer
from attnviz.links import eflomal as eflomal_align


def test_eflomal_missing_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "eflomal", None)
    with pytest.raises(ConfigError, match="pip install eflomal"):
        eflomal_align.run_eflomal([(["a"], ["b"])])


def test_eflomal_aligns_a_tiny_corpus():
    pytest.importorskip("eflomal", reason="eflomal is not installed (pip install eflomal==2.0.0)")
    corpus = load_corpus("toy-fr", n_train=300, n_valid=0, n_test=20, seed=0)
    pairs = [(p.source_tokens, p.target_tokens) for p in corpus.test]
    train = [(p.source_tokens, p.target_tokens) for p in corpus.train]
    links = eflomal_align.run_eflomal(pairs, train, method="grow-diag-final-and", rel_iterations=0.5)
    assert len(links) == len(pairs)
    for (src, tgt), sentence in zip(pairs, links, strict=True):
        assert all(0 <= i < len(src) and 0 <= j < len(tgt) for i, j in sentence)
    assert aer(links, [p.sure for p in corpus.test], [p.possible for p in corpus.test]) < 0.3
    forward = eflomal_align.run_eflomal(pairs[:3], train, method="forward", rel_iterations=0.5)
    assert len(forward) == 3
    with pytest.raises(ConfigError, match="unknown method"):
        eflomal_align.run_eflomal(pairs, method="best")
