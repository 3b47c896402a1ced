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


def test_a_name_too_long_for_a_file_name_is_refused_not_cut(capsys, models):
    """Cut to 60 characters, two long names differing at their end would share one file (and --force
    would train one over the other): a longer name is refused, saying the limit. A name of 60 is taken."""
    long = "dates-additive-bahdanau-experiment-with-a-long-descriptive-name-seed-"
    for seed in ("1", "2"):
        code, _, err = run(capsys, "train", "--data", "copy", "--name", long + seed, "--max-steps", "1", "--quiet")
        assert code == 2 and "at most 60" in err and "70 characters" in err and "Traceback" not in err
    assert not list(models.glob("*.safetensors"))
    code, _, err = run(capsys, "train", "--data", "copy", "--name", "x" * 60, "--max-steps", "1", "--quiet")
    assert code == 0, err
    assert (models / f"{'x' * 60}.safetensors").is_file()
