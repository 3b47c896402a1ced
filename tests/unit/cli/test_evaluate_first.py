"""``attnviz evaluate --n N --data TABLE`` tokenizes the N pairs it measures, not every row of the
table: the same pairs, in the same order, with the same figures as measuring the first N pairs of the
table's test split loaded whole."""

from __future__ import annotations

import json

from attnviz.data import load_corpus, spec
from attnviz.evaluation import evaluate
from attnviz.store.checkpoint import load_checkpoint
from tests.support.cli import run


def test_evaluate_n_tokenizes_the_pairs_it_measures(capsys, model_file, tmp_path, monkeypatch):
    words = [" ".join("abcdefgh"[int(d)] for d in f"{k:o}") for k in range(8, 208)]  # 200 pairs, each its own
    rows = [f"{w}\t{' '.join(reversed(w.split()))}\n" for w in words]
    (tmp_path / "pairs.tsv").write_text("src\ttgt\n" + "".join(rows), encoding="utf-8")
    data = f"{tmp_path / 'pairs.tsv'}?src=src&tgt=tgt"
    made, make_pair = [], spec.make_pair
    monkeypatch.setattr(spec, "make_pair", lambda *a, **k: made.append(a) or make_pair(*a, **k))
    code, out, err = run(capsys, "evaluate", "--model", "good", "--data", data, "--n", "3", "--json")
    assert code == 0, err
    assert len(made) == 3  # the three pairs measured, no other row
    monkeypatch.setattr(spec, "make_pair", make_pair)
    pairs = load_corpus(data).test[:3]
    assert [(p.source, p.target) for p in pairs] == [a[:2] for a in made]
    expected = evaluate(load_checkpoint(model_file), pairs).to_dict()
    assert {k: v for k, v in json.loads(out).items() if k in expected} == json.loads(json.dumps(expected))
