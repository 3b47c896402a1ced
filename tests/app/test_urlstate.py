"""Explore's state in the URL (AppTest, tiny models): a link restores the checkpoint and display
toggles, Back (a history navigation) restores an earlier query, a bad link falls back with one
line; the sidebar names the checkpoint picked; the math panel and the Weights caption say what
the maps show; Learn's closing caption follows the example's numbers."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from streamlit.testing.v1 import AppTest

from attnviz_app.app_pages.shared import state
from tests.support.app import EXAMPLE, TEXT, start
from tests.support.paths import APP, ROOT

TWIN = "toyfr-general-bahdanau-twin"


@pytest.fixture
def twin_env(app_env, tmp_path, monkeypatch):
    """The tiny models and a second checkpoint of the general/Bahdanau slot."""
    import streamlit as st

    models = tmp_path / "models"
    shutil.copytree(app_env, models)
    shutil.copyfile(models / "toyfr-general-bahdanau.safetensors", models / f"{TWIN}.safetensors")
    monkeypatch.setenv("ATTNVIZ_MODELS", str(models))
    st.cache_data.clear()
    return models


def query(at: AppTest) -> dict[str, str]:
    return {k: v[-1] if isinstance(v, list) else v for k, v in at.query_params.items()}


def test_a_link_restores_the_checkpoint_and_the_display_toggles(twin_env):
    at = start(explore_style="both", explore_text=TEXT)
    box = at.selectbox(key="explore_checkpoint_bahdanau")
    default = box.value
    other = next(o for o in box.options if o != box.format_func(default))
    box.select(other).run()
    at.toggle(key="explore_eos").set_value(True).run()
    assert not at.exception
    name = other.split(" · ")[0]
    link = query(at)
    assert link["bahdanau"] == name and link["hide_eos"] == "1" and link["style"] == "both"
    shown = [c.value.replace("\\", "") for c in at.sidebar.caption]  # Markdown escapes: toyfr\-general
    assert any(c.startswith(f"Bahdanau model: {name} (") for c in shown)  # the one picked

    fresh = AppTest.from_file(APP, default_timeout=60)
    fresh.query_params.update(link)
    fresh.run()
    assert not fresh.exception
    assert fresh.selectbox(key="explore_checkpoint_bahdanau").value.endswith(f"{name}.safetensors")
    assert fresh.toggle(key="explore_eos").value is True
    assert fresh.segmented_control(key="explore_style").value == "both"
    assert fresh.text_input(key="explore_text").value == TEXT


def test_streamlit_says_when_back_or_forward_started_a_run():
    """attnviz_app.app_pages.shared.state reads this flag of the pinned Streamlit's script-run context."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext

    assert "is_history_navigation" in ScriptRunContext.__dataclass_fields__


def test_back_restores_the_earlier_query_and_a_missing_parameter_is_its_default(app_env, monkeypatch):
    at = start()
    at.text_input(key="explore_text").set_value(TEXT).run()
    earlier = query(at)
    at.segmented_control(key="explore_style").set_value("both").run()
    at.slider(key="explore_beam").set_value(3).run()
    at.toggle(key="explore_eos").set_value(True).run()
    assert query(at)["beam"] == "3" and query(at)["hide_eos"] == "1"
    at.query_params.clear()
    at.query_params.update(earlier)  # the browser's Back: Streamlit reruns on the entry's query
    monkeypatch.setattr(state, "_history_navigation", lambda: True)
    at.run()
    assert not at.exception
    assert at.segmented_control(key="explore_style").value == "luong"
    assert at.slider(key="explore_beam").value == 1 and at.toggle(key="explore_eos").value is False
    assert at.text_input(key="explore_text").value == TEXT
    monkeypatch.setattr(state, "_history_navigation", lambda: False)
    at.segmented_control(key="explore_style").set_value("bahdanau").run()  # an action after Back: the URL follows
    assert query(at)["style"] == "bahdanau" and query(at)["text"] == TEXT


def test_one_action_is_one_write_and_a_run_that_changes_nothing_writes_nothing(app_env, monkeypatch):
    import streamlit as st

    at = start()
    real = type(st.query_params).from_dict
    calls = []

    def counted(self, values):
        calls.append(dict(values))
        return real(self, values)

    monkeypatch.setattr(type(st.query_params), "from_dict", counted)
    at.text_input(key="explore_text").set_value(TEXT).run()
    assert len(calls) == 1, "one write (one history entry) for one action"
    at.run()
    assert len(calls) == 1


def test_a_bad_link_opens_the_defaults_with_one_line(app_env):
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"task": "klingon", "beam": "many", "cell": "x", "view": "<b>nope</b>", "colour": "red"})
    at.run()
    assert not at.exception
    assert at.selectbox(key="explore_task").value == "toy-fr" and at.slider(key="explore_beam").value == 1
    assert at.session_state["explore_view"] == "Weights"
    notes = [i.value for i in at.info if "not known here" in i.value]
    assert len(notes) == 1 and "\n" not in notes[0]
    assert all(word in notes[0] for word in ("klingon", "many", "colour", "nope"))
    # the link's own history entry stands for what it opened: no corrected copy is pushed after it,
    # so Back from the first action returns there (to the same defaults and note)
    assert query(at)["task"] == "klingon"
    at.segmented_control(key="explore_style").set_value("both").run()
    assert not [i for i in at.info if "not known here" in i.value]  # the note goes with the link
    assert query(at)["task"] == "toy-fr" and query(at)["style"] == "both"  # the first action writes the state


def test_hidden_eos_the_math_panel_says_how_the_map_weight_is_made(app_env):
    at = start(explore_text=TEXT, explore_eos=True, explore_cell=(0, 1))
    assert not at.exception
    notes = [c.value for c in at.caption if c.value.startswith("The map hides `<eos>`")]
    assert len(notes) == 1
    number = r"([\d.]+(?:e-?\d+)?)"
    raw, rest, shown = (
        float(x) for x in re.search(rf"shows {number} / {number} = \*\*{number}\*\*", notes[0]).groups()
    )
    assert shown == pytest.approx(raw / rest, abs=1e-3)


def test_the_weights_caption_tells_each_score_s_row_sums(app_env):
    at = start(explore_text=TEXT)
    assert any("each row sums to 1" in c.value for c in at.caption)
    at.selectbox(key="explore_score").set_value("local_p").run()  # toy-fr's local-p model is Luong's
    assert not at.exception
    weights = [c.value for c in at.caption if c.value.startswith("Row $t$")]
    assert weights and "each row sums to 1" not in weights[0] and "rows sum to" in weights[0]


@pytest.mark.parametrize(
    ("score", "said", "unsaid"),
    [("dot", "almost all", "not 1"), ("additive", "not most of it", "almost all"), ("local_p", "not 1", "almost all")],
)
def test_learn_s_closing_caption_follows_the_example(app_env, score, said, unsaid):
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.session_state["learn_worked_score"] = score
    at.switch_page("attnviz_app/app_pages/learn.py").run()
    assert not at.exception
    closing = next(c.value for c in at.caption if c.value.startswith(("Key ", "Keys ")))
    assert said in closing and unsaid not in closing


def test_a_link_of_hundreds_of_unknown_parameters_gets_a_short_note(app_env):
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({f"p{i}<b>": "x" * 50 for i in range(300)})
    at.run()
    assert not at.exception
    [note] = [i.value for i in at.info if "not known here" in i.value]
    assert "and 294 more" in note and len(note) < 300


@pytest.mark.parametrize(
    ("link", "said"),
    [
        ({"view": "Per step", "step": "99999999"}, "This link's step 99999999 lies beyond this decode ("),
        ({"cell": "99999,2"}, "This link's cell 99999,2 lies beyond this decode ("),
    ],
)
def test_a_link_beyond_the_decode_says_what_is_shown_instead(app_env, link, said):
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"task": "toy-fr", **link})
    at.run()
    assert not at.exception
    notes = [c.value for c in at.caption if "lies beyond this decode" in c.value]
    assert len(notes) == 1 and notes[0].startswith(said), [c.value[:70] for c in at.caption]
    at.run()  # the note went with the link's first view
    assert not [c for c in at.caption if "lies beyond this decode" in c.value]


def test_a_link_to_a_task_whose_models_are_not_installed_says_how_to_get_them(app_env, tmp_path):
    manifest = json.loads((ROOT / "pretrained" / "manifest.json").read_text(encoding="utf-8"))["models"]
    absent = [m for m in manifest if m["name"] == "multi30k-en-fr-dot-luong"]
    (tmp_path / "no-pretrained").mkdir()
    (tmp_path / "no-pretrained" / "manifest.json").write_text(json.dumps({"models": absent}), encoding="utf-8")
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"task": "multi30k-en-fr", "beam": "many"})
    at.run()
    assert not at.exception
    [note] = [i.value for i in at.info if "no models installed here" in i.value]
    assert "attnviz app --models DIR" in note and "beam “many” is not known here" in note


@pytest.mark.parametrize("beam", ["0", "11", "99"])
def test_a_link_s_beam_outside_the_slider_is_noted_and_opens_beam_1(app_env, beam):
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"task": "toy-fr", "beam": beam})
    at.run()
    assert not at.exception
    assert at.slider(key="explore_beam").value == 1
    [note] = [i.value for i in at.info if "not known here" in i.value]
    assert f"beam “{beam}”" in note


def test_a_link_s_long_text_is_cut_to_1000_characters(app_env):
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"task": "toy-fr", "text": "the cat " * 200})  # 1600 characters
    at.run()
    assert not at.exception
    assert at.text_input(key="explore_text").value == ("the cat " * 200)[:1000]


def test_a_step_pulled_back_into_a_shorter_decode_is_the_step_the_link_says(tmp_path, monkeypatch):
    # the view clamps the step after the page staged the URL: the link must say the step shown (a shipped
    # toy-fr model: the tiny ones write two steps whatever the sentence)
    import streamlit as st

    monkeypatch.setenv("ATTNVIZ_MODELS", str(tmp_path / "models"))
    st.cache_data.clear()
    at = start(explore_view="Per step", explore_task="toy-fr", explore_score="general", explore_style="luong")
    at.text_input(key="explore_text").set_value(EXAMPLE).run()
    n = int(at.slider(key="explore_step").max) + 1
    at.slider(key="explore_step").set_value(n - 1).run()
    assert query(at)["step"] == str(n - 1)
    at.text_input(key="explore_text").set_value("the cat .").run()
    assert not at.exception
    shown = int(at.slider(key="explore_step").value) if at.slider else 0
    assert shown < n - 1 and query(at).get("step", "0") == str(shown)
    st.cache_data.clear()
