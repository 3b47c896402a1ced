"""The ``bench`` command: JSON or a readable line, and bad settings refused (no timing assertions)."""

import argparse
import json
import shlex

import pytest

from attnviz.cli.bench import add_arguments, run
from attnviz.errors import ConfigError

TINY = "--batch 2 --emb 4 --hidden 6 --len 3 --vocab 12"  # sizes that time in a blink


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


def test_run_prints_json(capsys):
    args = _args(*shlex.split(f"{TINY} --steps 2 --translate-runs 2 --threads 1 --json"))
    assert run(args) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["batch"] == 2 and result["length"] == 3 and result["train_tokens_per_s"] > 0


def test_run_prints_a_readable_line(capsys):
    assert run(_args(*shlex.split(f"{TINY} --steps 1"))) == 0
    assert "tokens/s" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--score", "bilinear"], "unknown score function"),
        (["--style", "transformer"], "unknown style"),
        (["--batch", "0"], "batch must be"),
        (["--len", "0"], "length must be"),
        (["--vocab", "3"], "vocab must be"),
        (["--steps", "0"], "steps must be"),
        (["--warmup", "-1"], "warmup must be"),
        (["--threads", "0"], "threads must be"),
        (["--input-feeding"], "input_feeding belongs to the Luong decoder"),
    ],
)
def test_run_rejects_bad_arguments(argv, message):
    with pytest.raises(ConfigError, match=message):
        run(_args(*argv))
