"""Evaluation: a model is measured on its own data spec; a broken checkpoint among several loses no
other row."""

from __future__ import annotations

import importlib
import json

import pytest

from attnviz.errors import ConfigError
from attnviz.evaluation.evaluate import evaluate_checkpoints, foreign_note, measured_on
from tests.support.cli import run


def test_a_broken_checkpoint_does_not_lose_the_other_rows(capsys, models, model_file):
    broken = models / "broken.safetensors"
    broken.write_bytes(model_file.read_bytes()[:300])
    done = evaluate_checkpoints(["good", str(broken), str(model_file)], n=4)
    assert [r["model"] for r in done.rows] == ["good", str(model_file)]
    assert [e["model"] for e in done.errors] == [str(broken)] and "corrupt" in done.errors[0]["error"]

    code, out, err = run(capsys, "evaluate", "--model", "good", "--model", "broken", "--model", "good", "--n", "4")
    assert code == 2 and out.count("bleu:") == 2  # both good rows printed
    assert err.count("\n") == 1 and "broken" in err
    code, out, _ = run(capsys, "evaluate", "--model", "good", "--n", "4", "--json")
    assert code == 0 and json.loads(out)["n"] == 4


def test_a_model_is_measured_on_its_own_built_in_data_spec_and_needs_data_for_a_file_or_folder():
    options = {"subwords": [8000, 0], "n_test": 50}
    meta = {"task": "multi30k-de-en", "recipe_full": {"data": "multi30k-de-en", "data_options": options}}
    assert measured_on(meta) == ("multi30k-de-en", {"n_test": 50})  # subwords only cut training text
    for spec in ("multi30k-de-en@/data/m30k", "pairs.csv?src=en&tgt=fr"):  # a checkpoint names no path
        with pytest.raises(ConfigError, match="--data"):
            measured_on({"recipe_full": {"data": spec, "data_options": {}}})
    assert measured_on(meta, data="toy-fr") == ("toy-fr", {})
    with pytest.raises(ConfigError, match="--data"):
        measured_on({})


def test_models_of_one_data_read_it_once_with_the_figures_each_gets_alone(monkeypatch, models, model_file):
    module = importlib.import_module("attnviz.evaluation.evaluate")
    reads, read = [], module.own_pairs

    def counted(translator, data=None, split="test", n=None):
        reads.append(measured_on(translator.meta, data))
        return read(translator, data, split, n)

    monkeypatch.setattr(module, "own_pairs", counted)
    done = evaluate_checkpoints(["good", str(model_file), "good"], n=4)
    assert len(reads) == 1 and len(done.rows) == 3  # one data, read for the first model only
    alone = [evaluate_checkpoints([name], n=4).rows[0] for name in ("good", str(model_file))]
    assert [r | {"model": None} for r in done.rows] == [r | {"model": None} for r in (*alone, alone[0])]
    evaluate_checkpoints(["good"], data="toy-fr", n=4)
    assert reads[-1] == ("toy-fr", {})  # data named: read as named


def test_data_foreign_to_the_model_is_measured_and_said_to_say_little(capsys, models, model_file):
    own = evaluate_checkpoints(["good"], n=8).rows[0]
    assert own["unknown"] < 0.5 and foreign_note(own) is None  # its own task: most of its words known
    other = evaluate_checkpoints(["good"], data="toy-fr", n=8).rows[0]
    assert other["unknown"] > 0.9  # English words, unknown to a model of single letters
    assert foreign_note(other).startswith(f"good: {other['unknown']:.0%} of the source tokens of toy-fr are unknown")
    code, out, err = run(capsys, "evaluate", "--model", "good", "--data", "toy-fr", "--n", "8")
    assert code == 0 and "unknown: " in out  # the scores are still printed, with the warning beside them
    assert err.count("\n") == 1 and "warning: good: " in err and "(leave out --data)" in err
