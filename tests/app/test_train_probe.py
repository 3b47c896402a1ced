"""The Train page's probe sentence (AppTest, tiny models): the sentence Explore shows is offered
beside the data's example when it is in the data's source language, a pick fills the box, and the
training records the sentence in the box."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from streamlit.testing.v1 import AppTest

from attnviz.data import EXAMPLE
from attnviz_app.app_pages.shared.common import escape_markdown
from attnviz_app.app_pages.train.probe import probe_choices, source_language
from tests.support.paths import APP

TYPED = "the girl sees the cat ."


def train_page(explore_text: str) -> AppTest:
    """Explore opened on ``explore_text`` (toy-fr, the app models' first task), then the Train page."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["explore_text"] = explore_text
    at.run()
    at.switch_page("attnviz_app/app_pages/train/train.py").run()
    assert not at.exception, at.exception
    return at


def test_explores_sentence_is_offered_and_a_pick_fills_the_box(app_env, monkeypatch):
    from attnviz.server import REGISTRY

    at = train_page(TYPED)
    assert at.session_state["explore_task"] == "toy-fr" and at.selectbox(key="train_task").value == "toy-fr"
    pills = at.pills(key="train_probe_pick")
    assert pills.options == [f"Example: {escape_markdown(EXAMPLE)}", r"From Explore: the girl sees the cat \."]
    assert pills.value == "example" and at.text_input(key="train_probe").value == EXAMPLE  # the box holds the example
    pills.set_value("explore").run()
    assert at.text_input(key="train_probe").value == TYPED and at.pills(key="train_probe_pick").value == "explore"

    submitted = []

    def submit(sid, recipe, **kwargs):
        submitted.append(recipe)
        return SimpleNamespace(out=app_env / "x.safetensors", status="done")

    monkeypatch.setattr(REGISTRY, "submit", submit)
    for key, value in (("train_n", 100), ("train_epochs", 1)):
        at.number_input(key=key).set_value(value)
    at.button(key="train_start").click().run()
    assert not at.exception and submitted[0].train["probe"] == TYPED

    at.text_input(key="train_probe").set_value("the cat sees the girl .").run()
    assert at.pills(key="train_probe_pick").value is None  # an edited box lights no pill


def test_a_sentence_of_another_language_is_not_offered(app_env):
    at = train_page(TYPED)
    at.selectbox(key="train_task").set_value("dates").run()
    assert at.pills(key="train_probe_pick").options == ["Example: saturday 22nd of november 2026"]
    assert at.text_input(key="train_probe").value == "saturday 22nd of november 2026"


@pytest.mark.parametrize(
    ("spec", "task", "text", "offered"),
    [
        ("multi30k-en-de", "multi30k-en-fr", "A dog runs.", {"explore": "A dog runs."}),  # both English sources
        ("multi30k-de-en@/data/m30k", "multi30k-de-fr", " Ein Hund. ", {"explore": "Ein Hund."}),
        ("multi30k-de-en", "multi30k-en-de", "A dog runs.", {}),
        ("toy-fr", "toy-fr", EXAMPLE, {"example": EXAMPLE}),  # once
        ("toy-fr", "toy-fr", "", {"example": EXAMPLE}),
        ("toy-fr", "toy-fr", "word " * 20, {"example": EXAMPLE}),  # longer than the box takes
        ("toy-fr", "dates", "monday 3rd of may", {"example": EXAMPLE}),
        ("pairs.csv?src=en&tgt=de", "multi30k-en-de", "A dog runs.", {}),  # a file's language is not known
        ("copy", None, "a b", {"example": "a b c d e"}),  # Explore never opened
    ],
)
def test_the_offer_follows_the_source_language(spec, task, text, offered):
    assert probe_choices(spec, task, text) == offered


def test_source_languages():
    assert [source_language(t) for t in ("multi30k-en-fr", "toy-fr", "other", "x.csv?src=a&tgt=b", None)] == [
        "en",
        "toy-fr",
        None,
        None,
        None,
    ]
