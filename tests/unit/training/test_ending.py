"""How a training ends, and what it says about it: early stopping fires after ``patience`` epochs
without a better validation loss and keeps the best epoch's weights; ``meta["ending"]`` (printed by
``attnviz train``, shown by the Train page) says why it stopped and which epoch the model is."""

from __future__ import annotations

import json

import pytest
import torch

from attnviz.training.config import TrainConfig, TrainResult, ending
from attnviz.training.fit import fit
from tests.support.cli import run
from tests.support.tiny import tiny_translator


def test_early_stopping_ends_after_patience_epochs_and_keeps_the_best_epochs_weights(corpus):
    """A rate far too high: the validation loss stops improving, and two epochs later training ends
    (not at the 12 asked), with the weights of its best epoch and a sentence that says both."""
    translator = tiny_translator(corpus)
    ends: dict[int, dict] = {}

    def keep(tr, result):
        ends[result.epochs_run] = {k: v.clone() for k, v in tr.model.state_dict().items()}

    result = fit(translator, corpus, TrainConfig(epochs=12, batch_size=8, lr=1.0, patience=2), on_epoch_end=keep)
    losses = [row["valid_loss"] for row in result.history]
    best = losses.index(min(losses)) + 1
    assert result.early_stopped and result.epochs_run == best + 2 < 12
    assert result.best_epoch == best
    for name, weight in translator.model.state_dict().items():
        assert torch.equal(weight, ends[best][name]), name
    assert translator.meta["ending"] == (
        f"Stopped early after epoch {best + 2} of 12: its validation loss had not improved for 2 epochs; "
        f"the model keeps epoch {best}'s weights, its best validation loss."
    )


def test_a_training_that_runs_every_epoch_and_ends_on_its_best_says_nothing(corpus):
    translator = tiny_translator(corpus)
    result = fit(translator, corpus, TrainConfig(epochs=3, batch_size=8, lr=1e-2, patience=None))
    losses = [row["valid_loss"] for row in result.history]
    assert losses == sorted(losses, reverse=True)  # each epoch better than the last
    assert result.best_epoch == 3 and "ending" not in translator.meta


def _result(**kw) -> TrainResult:
    return TrainResult(**{"epochs_run": 20, "best_epoch": 20, **kw})


@pytest.mark.parametrize(
    ("result", "cfg", "validated", "kept", "said"),
    [
        (_result(), TrainConfig(epochs=20), True, 20, None),
        (
            _result(best_epoch=17),
            TrainConfig(epochs=20),
            True,
            17,
            "The model keeps epoch 17's weights, its best validation loss.",
        ),
        (
            _result(epochs_run=7, best_epoch=4, early_stopped=True),
            TrainConfig(epochs=20),
            False,
            4,
            "Stopped early after epoch 7 of 20: its training loss had not improved for 3 epochs (there is no "
            "validation split); the model keeps epoch 4's weights, its best training loss.",
        ),
        (
            _result(epochs_run=2, out_of_time=True),
            TrainConfig(epochs=20, max_seconds=90),
            True,
            2,
            "Stopped in epoch 2 of 20 at its time budget of 90 s.",
        ),
        (
            _result(epochs_run=1, best_epoch=1),
            TrainConfig(epochs=20, max_steps=1500),
            True,
            1,
            "Stopped in epoch 1 of 20 at its 1,500 steps.",
        ),
        (
            _result(averaged=5),
            TrainConfig(epochs=20, average_last=5),
            True,
            20,
            "The model is the mean of its last 5 epochs' weights.",
        ),
        (_result(stopped=True, epochs_run=3, best_epoch=3), TrainConfig(epochs=20), True, 3, None),
        (
            _result(epochs_run=9, best_epoch=6),
            TrainConfig(epochs=9),
            True,
            9,
            "The model keeps epoch 9's weights: epoch 6's validation loss was lower, but a resumed training "
            "starts from its last saved epoch and had not kept that one.",
        ),
    ],
    ids=["all-last-best", "earlier-best", "patience-no-valid", "time", "steps", "averaged", "stopped", "resumed"],
)
def test_the_ending_says_why_and_which_weights(result, cfg, validated, kept, said):
    assert ending(result, cfg, validated, kept) == said


def test_a_resumed_training_remembers_its_best_epoch(corpus):
    """The progress record carries the best epoch, so a resumed training that beats it names the right one."""
    translator = tiny_translator(corpus)
    cfg = TrainConfig(epochs=4, batch_size=8, lr=1e-2, patience=None)
    epochs = []
    fit(translator, corpus, cfg, should_stop=lambda: len(epochs) >= 2, on_epoch_end=lambda tr, r: epochs.append(1))
    progress = translator.meta["progress"]
    assert progress["epoch"] == 2 and progress["best_epoch"] == 2
    result = fit(translator, corpus, cfg, resume=progress)
    assert result.best_epoch == 4 and "ending" not in translator.meta
    odd = {**progress, "best_epoch": "two"}  # a record edited by hand: read as unknown, not a crash
    assert fit(translator, corpus, TrainConfig(epochs=3, batch_size=8, lr=1e-2, patience=None), resume=odd).epochs_run


def test_attnviz_train_prints_the_ending_and_json_carries_it(capsys, models, tmp_path):
    recipe = tmp_path / "r.json"
    recipe.write_text(
        json.dumps(
            {
                "name": "early",
                "data": "copy",
                "data_options": {"n_train": 200, "n_valid": 20, "n_test": 20},
                "model": {"emb_dim": 8, "hidden_dim": 8, "attn_dim": 8},
                "train": {"epochs": 12, "batch_size": 8, "lr": 1.0, "patience": 1},
            }
        )
    )
    code, out, err = run(capsys, "train", "--recipe", str(recipe), "--eval-n", "0", "--quiet")
    line = next(line for line in err.splitlines() if line.startswith("Stopped early after epoch"))
    assert code == 0 and "had not improved for 1 epoch;" in line and "of 12" in line
    code, out, _ = run(capsys, "train", "--recipe", str(recipe), "--eval-n", "0", "--quiet", "--json", "--force")
    assert code == 0 and json.loads(out)["ending"] == line
