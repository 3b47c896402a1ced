"""Explore's Alignment view, markup part (AppTest, tiny models): a marked-up sentence carried into a
translation, shown as coloured text and boxes on the map; the user's markup never rendered as HTML."""

from __future__ import annotations

import json

import pytest

from attnviz.plots import SPAN_COLOURS
from tests.support.app import TEXT, start

REFERENCE = "la fille voit le chat ."
MARKUP = 'the <b>girl</b> sees <a href="javascript:alert(1)" onclick="x()">the cat</a> {who}<br/> .'
OPEN = {"explore_view": "Alignment", "explore_align_part": "markup", "explore_markup_target": REFERENCE}
LOW = {"explore_align_method": "threshold", "explore_align_threshold": 0.05}  # the tiny models link little by argmax


def html_bodies(at) -> list[str]:
    return [h.proto.body for h in at.get("html")]


def coloured(at) -> list[str]:
    """The source's and the translation's coloured words, one after the other for each model."""
    return [b for b in html_bodies(at) if b.startswith('<div style="line-height')]


def test_markup_is_carried_into_the_translation_and_shown_only_as_text(app_env):
    at = start(explore_text=TEXT, explore_markup_text=MARKUP, **OPEN, **LOW)
    assert not at.exception, at.exception
    source, target = coloured(at)
    assert f"background:{SPAN_COLOURS[0]}" in source and ">girl</span>" in source
    assert "{who}" in source and "&lt;br/&gt;" in source  # elements without words: their label, escaped
    assert "fille" in target and "{who}" in target and "background:" in target
    for body in coloured(at):
        assert "<a " not in body and "<b>" not in body and "onclick" not in body  # never the user's tags
    code = at.code[0].value
    assert code.count("<b>") == 1 and '<a href="javascript:alert(1)" onclick="x()">' in code and "{who}" in code
    table = at.dataframe[0].value
    assert list(table["element"]) == ["<b>", "<a>", "{who}", "<br/>"]
    assert table["attributes"][1] == 'href="javascript:alert(1)" onclick="x()"'
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    shapes = spec["layout"].get("shapes", [])
    assert shapes  # a box per element with source and target words, in its colour, named by its label
    for shape in shapes:
        number, label = shape["name"].split(". ")
        assert (
            shape["fillcolor"] == SPAN_COLOURS[int(number) - 1]
            and label == {"1": "&lt;b&gt;", "2": "&lt;a&gt;"}[number]
        )
    assert all("<" not in t for t in spec["layout"]["xaxis"]["ticktext"])


def test_the_split_rule_and_eflomal_are_offered(app_env):
    at = start(explore_text=TEXT, explore_markup_text="the girl does <i>not</i> see the cat .", **OPEN)
    assert not at.exception, at.exception
    at.segmented_control(key="explore_markup_split").set_value("block").run()
    assert not at.exception and at.dataframe[0].value["element"].tolist() == ["<i>"]
    pytest.importorskip("eflomal", reason="eflomal is not installed (pip install eflomal==2.0.0)")
    at.segmented_control(key="explore_markup_aligner").set_value("eflomal").run()
    assert not at.exception, at.exception
    assert "eflomal links" in json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]["title"]["text"]


@pytest.mark.parametrize(
    ("markup", "says"),
    [
        ("<script>alert(1)</script> the cat", "not inline markup"),
        ("the <b>cat", "never closed"),
        ("<b>x</b>" * 200, "more than"),
    ],
)
def test_bad_markup_is_an_error_message_and_nothing_is_drawn(app_env, markup, says):
    at = start(explore_text=TEXT, explore_markup_text=markup, **OPEN)
    assert not at.exception, at.exception
    assert at.error and says in at.error[0].value.replace("\\", "")
    assert not coloured(at) and not at.get("plotly_chart") and "<script>" not in "".join(html_bodies(at))


def test_in_both_each_model_carries_the_markup(app_env):
    at = start(explore_style="both", explore_text=TEXT, explore_markup_text=MARKUP, **OPEN)
    assert not at.exception, at.exception
    assert len(coloured(at)) == 4 and len(at.code) == 2 and len(at.get("plotly_chart")) == 2
    assert any(m.value.startswith("**Bahdanau**") for m in at.markdown)


def test_a_character_model_says_it_cannot_carry_markup(app_env):
    at = start(
        explore_task="dates",
        explore_text="saturday 22nd of november 2026",
        explore_view="Alignment",
        explore_align_part="markup",
    )
    assert not at.exception, at.exception
    assert any("reads characters" in i.value for i in at.info)
