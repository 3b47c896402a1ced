"""The Train page says how a finished training ended: stopped early, and which epoch the saved model is
(``meta["ending"]``, carried by the job's snapshot), beside where the model now appears."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _finished(ending: str | None) -> None:
    from pathlib import Path

    from attnviz.server.jobs import JobSnapshot
    from attnviz_app.app_pages.train.form import progress_panel

    class Finished:
        owner = None

        def snapshot(self) -> JobSnapshot:
            path = Path("models/early.safetensors")
            return JobSnapshot("early", "done", [], [], None, None, None, path, 12.0, None, ending)

    progress_panel(Finished())


def test_a_finished_training_says_it_stopped_early_and_which_epoch_it_keeps():
    said = (
        "Stopped early after epoch 7 of 20: its validation loss had not improved for 3 epochs; the model keeps "
        "epoch 4's weights, its best validation loss."
    )
    at = AppTest.from_function(_finished, args=(said,), default_timeout=60).run()
    assert not at.exception
    [success] = at.success
    shown = success.value.replace("\\", "")  # Markdown escapes of the file name
    assert shown.startswith("Saved early.safetensors (12 s). Stopped early after epoch 7 of 20")
    assert "keeps epoch 4's weights" in shown and shown.endswith("Compare and Evaluate.")


def test_one_that_ran_every_epoch_says_only_where_it_is():
    at = AppTest.from_function(_finished, args=(None,), default_timeout=60).run()
    assert not at.exception
    assert (
        at.success[0].value.replace("\\", "")
        == "Saved early.safetensors (12 s). It is now in Explore, Compare and Evaluate."
    )
