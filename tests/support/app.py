"""The app opened by AppTest with session state set, and a sentence the tiny toy-fr models read."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.support.paths import APP

TEXT = "the girl sees the cat ."
EXAMPLE = "the black cat does not eat the apple of the girl."


def start(**state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()
