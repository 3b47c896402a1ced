"""A library error as the page shows it (``error_text``): a sentence with a capital and a full stop,
but a name, a path, a code or a formula's symbol left as written (Markdown's characters escaped)."""

from __future__ import annotations

import pytest
import streamlit as st

from attnviz.errors import InputError
from attnviz_app.app_pages.shared.common import error_text
from attnviz_app.app_pages.shared.keys import FILE_NAMES


@pytest.mark.parametrize(
    ("message", "shown"),
    [
        ("the query is empty; type numbers", "The query is empty; type numbers."),
        ("a recipe needs name", "A recipe needs name."),
        ("g must be one number for gain_dot", "g must be one number for gain\\_dot."),
        ("W_a must be 2 × 4 for concat", "W\\_a must be 2 × 4 for concat."),
        ("models/x.safetensors: not a checkpoint", "models/x\\.safetensors\\: not a checkpoint."),
        ("nothing to align (try e.g. 'a b')", "Nothing to align \\(try e\\.g\\. 'a b'\\)"),
    ],
)
def test_a_message_becomes_a_sentence_without_touching_names(message, shown):
    assert error_text(InputError(message)) == shown


def test_a_file_name_that_begins_the_message_keeps_its_case(monkeypatch):
    monkeypatch.setattr(st, "session_state", {FILE_NAMES: {"/srv/uploads/3f2a.txt": "badgold x.txt"}})
    shown = error_text(InputError("/srv/uploads/3f2a.txt line 2: 'x' is not a gold link"))
    assert shown.startswith("badgold x\\.txt line 2")
    assert "/srv/uploads" not in shown
    assert error_text(InputError("badly formed")) == "Badly formed."  # a word, not the file's name
