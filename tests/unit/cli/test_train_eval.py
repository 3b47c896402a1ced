"""``attnviz train --eval-n``: the evaluation after training says what it measures before it
starts, measures the first N test pairs (the whole split by default, as the shipped models were
measured) and is skipped with 0."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from attnviz.store.checkpoint import read_header
from tests.support.cli import run

SIZES = ["--emb", "8", "--hidden", "8", "--attn", "8"]
TINY = ["--data", "copy", "--n-train", "64", "--epochs", "1", "--batch", "32", *SIZES]


def test_the_evaluation_is_announced_and_measures_n_pairs(capsys, tmp_path):
    out = tmp_path / "m.safetensors"
    code, stdout, err = run(capsys, "train", *TINY, "--out", str(out), "--eval-n", "5", "--json")
    assert code == 0, err
    line = "evaluating on 5 of the 500 test pairs (BLEU, exact match, AER, entropy; --eval-n N: how many, 0: none)"
    assert line in err and err.index("epoch 1:") < err.index(line)  # after the training, before the long wait
    assert json.loads(stdout)["metrics"]["n"] == 5 and read_header(out)["meta"]["metrics"]["n"] == 5


def test_eval_n_0_skips_the_evaluation(capsys, tmp_path):
    out = tmp_path / "m.safetensors"
    code, stdout, err = run(capsys, "train", *TINY, "--out", str(out), "--eval-n", "0")
    assert code == 0, err
    assert "evaluating" not in err and stdout.strip() == f"saved {out} (not evaluated)"
    assert "metrics" not in read_header(out)["meta"]


@pytest.fixture
def measured(monkeypatch) -> list[int]:
    """How many pairs each evaluation after training was given (the evaluation itself is skipped)."""
    from attnviz.training import recipes

    counts = []

    def evaluate(translator, pairs, beam_size=1, align=True):
        counts.append(len(pairs))
        return SimpleNamespace(to_dict=lambda: {"n": len(pairs), "bleu": 0.0, "bleu_cased": 0.0})

    monkeypatch.setattr(recipes, "evaluate", evaluate)
    return counts


@pytest.mark.parametrize(
    ("flags", "pairs", "said"),
    [
        ([], 500, "all 500 test pairs"),  # the default: comparable with the leaderboard
        (["--eval-n", "all"], 500, "all 500 test pairs"),
        (["--eval-n", "200"], 200, "200 of the 500 test pairs"),
        (["--eval-n", "9000"], 500, "all 500 test pairs"),
    ],
)
def test_the_default_and_the_whole_split(capsys, tmp_path, measured, flags, pairs, said):
    code, _, err = run(capsys, "train", *TINY, "--max-steps", "1", "--out", str(tmp_path / "m.safetensors"), *flags)
    assert code == 0, err
    assert measured == [pairs] and f"evaluating on {said}" in err


def test_quiet_trains_and_evaluates_without_the_line(capsys, tmp_path, measured):
    code, _, err = run(capsys, "train", *TINY, "--max-steps", "1", "--out", str(tmp_path / "m.safetensors"), "--quiet")
    assert code == 0 and measured == [500] and "evaluating" not in err


@pytest.mark.parametrize("value", ["-1", "some", "2.5"])
def test_a_bad_eval_n_is_a_usage_error(capsys, value):
    with pytest.raises(SystemExit) as exc:
        run(capsys, "train", *TINY, "--eval-n", value)
    assert exc.value.code == 2 and "--eval-n" in capsys.readouterr().err
