"""The training benchmark runs on tiny sizes and reports positive numbers (no timing assertions)."""

import pytest

from attnviz.training.bench import TRANSLATE_TOKENS, run_bench

TINY = {"batch": 2, "emb": 4, "hidden": 6, "length": 3, "vocab": 12, "steps": 2, "warmup": 1, "translate_runs": 2}


@pytest.mark.parametrize(("score", "style"), [("additive", "bahdanau"), ("general", "luong")])
def test_run_bench_reports_positive_numbers(score, style):
    result = run_bench(score=score, style=style, threads=1, **TINY)
    for key in ("train_tokens_per_s", "train_step_ms_p50", "translate_ms_p50", "translate_ms_p95", "params"):
        assert result[key] > 0, key
    assert result["translate_ms_p95"] >= result["translate_ms_p50"]
    assert result["score"] == score and result["style"] == style and result["threads"] == 1
    assert result["translate_tokens"] == TRANSLATE_TOKENS
