"""The ``attribute`` command: JSON and text output; bad input exits 2."""

import json

import numpy as np
import pytest

from attnviz.cli.main import main
from attnviz.store.checkpoint import save
from tests.support.tiny import tiny_translator

SOURCE, REFERENCE = "a b c d", "d c b a"  # distinct tokens: changing one embedding row changes one position


@pytest.fixture
def model_file(corpus, tmp_path, monkeypatch):
    tr = tiny_translator(corpus)
    path = save(tr, tmp_path / "tiny.safetensors")
    monkeypatch.chdir(tmp_path)
    return str(path)


def test_cli_json(model_file, capsys):
    code = main(
        [
            "attribute",
            "--model",
            model_file,
            "--method",
            "ig",
            "--steps",
            "8",
            "--reference",
            REFERENCE,
            "--json",
            SOURCE,
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["source_tokens"] == ["a", "b", "c", "d", "<eos>"] and data["target_tokens"][-1] == "<eos>"
    assert np.asarray(data["values"]).shape == (len(data["target_tokens"]), 5)
    assert len(data["delta"]) == len(data["target_tokens"])
    assert {"spearman", "top1", "attention_top", "attribution_top", "mean_spearman", "top1_rate"} <= set(
        data["agreement"]
    )


def test_cli_text_and_bad_input(model_file, capsys):
    assert main(["attribute", "--model", model_file, "--method", "occlusion", SOURCE]) == 0
    out = capsys.readouterr().out
    assert "spearman" in out and "same source token first" in out
    assert main(["attribute", "--model", model_file, ""]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "empty" in err
    with pytest.raises(SystemExit) as exit_info:
        main(["attribute", "--model", model_file, "--steps", "0", SOURCE])
    assert exit_info.value.code == 2
