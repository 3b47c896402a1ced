"""The Train page's replay panel (attnviz_app/app_pages/train/replay.py) says where the alignment history
is kept: in the saved model, or nowhere when no model was saved; either way the animation downloads."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest


def _panel(status: str, saved: bool) -> None:
    from pathlib import Path

    from attnviz.server.jobs import JobSnapshot
    from attnviz_app.app_pages.train.replay import history_panel
    from tests.support.histories import tiny_history

    path = Path("models/m.safetensors") if saved else None
    history_panel(JobSnapshot("m", status, [], [], None, None, "no space left", path, 1.0, tiny_history([0, 4, 8])))


@pytest.mark.parametrize(
    ("status", "saved", "said"),
    [
        ("done", True, "3 recorded points, saved in the model"),
        ("stopped", True, "saved in the model"),
        ("failed", False, "No model was saved, so the history is not kept with one"),
        ("stopped", False, "No model was saved"),
    ],
)
def test_the_history_is_said_saved_only_with_a_saved_model(status, saved, said):
    at = AppTest.from_function(_panel, args=(status, saved), default_timeout=60).run()
    assert not at.exception
    captions = " ".join(c.value for c in at.caption)
    assert said in captions
    assert ("saved in the model" in captions) is saved
    assert len(at.get("download_button")) == 1
