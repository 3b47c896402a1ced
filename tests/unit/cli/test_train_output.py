"""Where ``attnviz train`` writes, said in the user's own terms: a folder that holds no files, a file
name that is only the suffix, an interruption (what is saved and how to go on), a file that holds this
training unfinished, and one whose unfinished training has other settings."""

from __future__ import annotations

import pytest

from attnviz.training import recipes
from tests.support.cli import run

TINY = ["train", "--data", "copy", "--emb", "8", "--hidden", "8", "--attn", "8", "--eval-n", "0", "--quiet"]


def test_a_folder_that_holds_no_files_is_named_not_the_lock_inside_it(capsys, models, monkeypatch):
    def refuse(path):
        raise FileNotFoundError(2, "No such file or directory", str(path))

    monkeypatch.setattr("attnviz.cli.train.hold_lock", refuse)
    code, _, err = run(capsys, *TINY, "--out", str(models / "x.safetensors"))
    assert code == 2 and f"cannot save {models / 'x.safetensors'}: {models} cannot hold files" in err
    assert ".training" not in err and "Traceback" not in err
    assert "choose another --out, or point ATTNVIZ_MODELS at a writable folder" in err  # it is the models folder
    elsewhere = models.parent / "elsewhere"
    elsewhere.mkdir()
    code, _, err = run(capsys, *TINY, "--out", str(elsewhere / "x.safetensors"))
    assert code == 2 and err.rstrip().endswith("cannot hold files (No such file or directory); choose another --out")


def test_a_file_name_that_is_only_the_suffix_gets_a_name_suggested(capsys, models, tmp_path):
    code, _, err = run(capsys, *TINY, "--out", str(tmp_path / ".safetensors"))
    assert code == 2 and "name it model.safetensors" in err and ".safetensors.safetensors" not in err


@pytest.fixture
def interrupted(capsys, models, monkeypatch):
    """``train --epochs 3`` interrupted (Ctrl+C) once its first epoch is saved: exit 130, and stderr."""
    save = recipes._save

    def save_then_interrupt(translator, out, store):
        path = save(translator, out, store)
        if translator.meta.get("progress", {}).get("epoch") == 1:
            raise KeyboardInterrupt
        return path

    monkeypatch.setattr(recipes, "_save", save_then_interrupt)
    code, _, err = run(capsys, *TINY, "--epochs", "3", "--name", "cut")
    monkeypatch.setattr(recipes, "_save", save)
    return code, err


def test_an_interruption_says_which_epoch_is_saved_and_how_to_go_on(interrupted, models):
    code, err = interrupted
    assert code == 130 and err.strip().splitlines()[-1] == (
        f"attnviz train: interrupted; {models / 'cut.safetensors'} keeps epoch 1 of 3: run the same command with "
        "--resume to go on from it"
    )


def test_the_same_command_again_points_to_resume_not_to_force(interrupted, capsys, models):
    code, _, err = run(capsys, *TINY, "--epochs", "3", "--name", "cut")
    assert code == 2 and "holds this training, stopped after epoch 1 of 3: add --resume to go on from it" in err
    code, _, err = run(capsys, *TINY, "--epochs", "3", "--name", "cut", "--resume")
    assert code == 0, err
    listed = run(capsys, "list")[1]
    assert "cut" in listed and "unfinished" not in listed


def test_resume_with_other_settings_names_what_differs(interrupted, capsys):
    code, _, err = run(capsys, *TINY, "--epochs", "4", "--seed", "7", "--name", "cut", "--resume")
    assert code == 2 and "an unfinished training whose settings differ" in err
    assert "train.epochs: 3 there, 4 asked" in err and "train.seed: the default there, 7 asked" in err
    assert "no unfinished training" not in err


def test_an_interruption_before_the_first_epoch_says_nothing_was_saved(capsys, models, monkeypatch):
    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("attnviz.training.run_recipe", interrupt)
    code, _, err = run(capsys, *TINY, "--name", "early")
    assert code == 130 and "no epoch had finished, so nothing was saved" in err
    assert not (models / "early.safetensors").exists()


def test_resume_where_there_is_nothing_to_resume_says_a_new_training_starts(capsys, models):
    """A mistyped --out with --resume trains afresh, as a script that starts or resumes expects, and says so."""
    out = models / "typo.safetensors"
    code, _, err = run(capsys, *TINY, "--out", str(out), "--resume")
    assert code == 0 and f"note: no checkpoint at {out} to resume: a new training starts there" in err
    assert out.is_file()
