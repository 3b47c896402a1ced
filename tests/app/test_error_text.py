"""A library error as the page shows it (``error_text``): a sentence with a capital and a full stop,
but a name, a path, a code or a formula's symbol left as written (Markdown's characters escaped)."""

from __future__ import annotations

import pytest

from attnviz.errors import InputError
from attnviz_app.app_pages.shared.common import error_text


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
