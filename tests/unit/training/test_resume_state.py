"""A stopped and resumed training is the run an uninterrupted one is: the same weights bit for bit, the
same best epoch and averaged weights, the same history, whatever the epoch it stopped after."""

from __future__ import annotations

import pytest
import torch

from attnviz.errors import AttnvizWarning
from attnviz.store.checkpoint import load_checkpoint, read_header
from attnviz.training.recipes import Recipe, run_recipe
from attnviz.training.resume_state import read_state, state_path

RECIPE = {
    "name": "tiny-resume",
    "data": "copy",
    "data_options": {"n_train": 64, "n_valid": 16, "n_test": 8, "seed": 0},
    "model": {"emb_dim": 8, "hidden_dim": 16, "attn_dim": 8, "score": "additive", "style": "bahdanau", "dropout": 0.3},
    "train": {"epochs": 5, "batch_size": 16, "lr": 0.02, "seed": 3, "patience": None, "average_last": 3},
}


def _stop_after(epochs: int, steps: int = 0):
    """A callback and a should_stop that stop ``steps`` optimiser steps into the epoch after ``epochs``."""
    seen = {"epochs": 0, "asked": 0}

    def count(p) -> None:
        seen["epochs"] += p.kind == "epoch"

    def stop() -> bool:
        if seen["epochs"] < epochs:
            return False
        seen["asked"] += 1
        return seen["asked"] > steps

    return count, stop


def _weights(path) -> dict[str, torch.Tensor]:
    return load_checkpoint(path).model.state_dict()


@pytest.mark.parametrize(("stop_after", "steps"), [(1, 0), (3, 0), (2, 2)], ids=["epoch-1", "epoch-3", "inside-3"])
def test_a_resumed_training_is_the_uninterrupted_run(tmp_path, stop_after, steps):
    recipe = Recipe(**RECIPE)
    whole = tmp_path / "whole.safetensors"
    run_recipe(recipe, whole, evaluate_split=None)
    assert not state_path(whole).exists()  # finished: nothing kept to resume

    out = tmp_path / "resumed.safetensors"
    count, stop = _stop_after(stop_after, steps)  # inside-3: two steps into epoch 3, which does not count
    run_recipe(recipe, out, callback=count, should_stop=stop, evaluate_split=None)
    progress = read_header(out)["meta"]["progress"]
    assert progress["epoch"] == stop_after and read_state(out, stop_after, progress["step"]) is not None
    run_recipe(recipe, out, resume=True, evaluate_split=None)

    a, b = _weights(whole), _weights(out)
    assert all(torch.equal(a[name], b[name]) for name in a)
    ma, mb = read_header(whole)["meta"], read_header(out)["meta"]
    assert [r["valid_loss"] for r in ma["history"]] == [r["valid_loss"] for r in mb["history"]]
    assert ma.get("averaged_epochs") == mb.get("averaged_epochs") and ma.get("ending") == mb.get("ending")
    assert not state_path(out).exists()


def test_a_state_for_another_epoch_is_not_used(tmp_path):
    """A save interrupted between the checkpoint and its state leaves them apart: the resume goes on as
    one without a state (Adam afresh), never with another epoch's moments."""
    recipe = Recipe(**RECIPE)
    out = tmp_path / "m.safetensors"
    count, stop = _stop_after(2)
    run_recipe(recipe, out, callback=count, should_stop=stop, evaluate_split=None)
    step = read_header(out)["meta"]["progress"]["step"]
    assert read_state(out, 2, step) is not None
    assert read_state(out, 1, step) is None and read_state(out, 2, step + 1) is None
    state_path(out).write_bytes(b"not a safetensors file")
    assert read_state(out, 2, step) is None
    with pytest.warns(AttnvizWarning, match="no usable resume state for epoch 2 .*not the run an uninterrupted"):
        run_recipe(recipe, out, resume=True, evaluate_split=None)  # resumes all the same, and says how
    assert "progress" not in read_header(out)["meta"] and not state_path(out).exists()


def test_a_state_that_cannot_be_written_leaves_the_checkpoint_saved(tmp_path, monkeypatch):
    """The checkpoint comes first: a disk with no room for the side file still keeps every epoch."""
    from attnviz.training import recipes

    def full(*_args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(recipes, "write_state", full)
    out = tmp_path / "m.safetensors"
    count, stop = _stop_after(2)
    run_recipe(Recipe(**RECIPE), out, callback=count, should_stop=stop, evaluate_split=None)
    assert read_header(out)["meta"]["progress"]["epoch"] == 2 and not state_path(out).exists()
