"""A model trained from the CLI may not take a shipped model's name: it would hide that model
in the models folder's listing (Evaluate, Explore)."""

from __future__ import annotations

from attnviz.store import shipped_names
from tests.support.cli import run


def test_train_refuses_the_name_of_a_shipped_model(capsys, models):
    assert "toy-fr-dot-luong" in shipped_names()
    code, _, err = run(capsys, "train", "--data", "copy", "--name", "toy-fr-dot-luong", "--max-steps", "1", "--quiet")
    assert code == 2 and "shipped model" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and not list(models.iterdir())
    code, _, err = run(capsys, "train", "--data", "copy", "--name", "toy-fr-dot-luong", "--force", "--max-steps", "1")
    assert code == 2 and "shipped model" in err


def test_train_takes_a_name_no_shipped_model_has(capsys, models):
    code, _, err = run(capsys, "train", "--data", "copy", "--name", "my-copy", "--max-steps", "1", "--quiet")
    assert code == 0, err
    assert (models / "my-copy.safetensors").is_file()
