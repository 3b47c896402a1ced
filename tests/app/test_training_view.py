"""Explore's Training view (AppTest, tiny models): the replay of a model's alignment history, the two
styles on one axis in Both, a model without history offered for retraining; the Train page's
suggested name never collides with a saved model."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from attnviz.store.checkpoint import load_checkpoint, save
from attnviz.training.recipes import Recipe
from tests.support.app import TEXT
from tests.support.paths import APP


def start(**state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in {"explore_text": TEXT, "explore_view": "Training", **state}.items():
        at.session_state[key] = value
    return at.run()


def replay(at: AppTest) -> dict:
    assert not at.exception, at.exception
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    found = [s for s in specs if s.get("frames")]
    assert len(found) == 1, "one replay figure"
    return found[0]


def test_the_training_view_replays_the_history(app_env):
    at = start()
    spec = replay(at)
    heat = [t for t in spec["data"] if t["type"] == "heatmap"]
    assert len(heat) == 1 and (heat[0]["zmin"], heat[0]["zmax"]) == (0, 1)  # one fixed colour scale
    assert spec["layout"]["sliders"][0]["steps"]
    assert spec["layout"]["updatemenus"][0]["buttons"][0]["method"] == "animate"
    assert spec["frames"][0]["layout"]["title"]["text"].startswith("untrained")
    titles = [a["text"] for a in spec["layout"]["annotations"]]
    assert {"training loss", "AER (probes)", "entropy (nats)"} <= set(titles)  # toy-fr has gold links
    assert at.download_button(key="explore_history_html") is not None
    table = at.dataframe[0].value
    assert list(table["model"]) == ["Luong"] and 0 <= table["last AER"][0] <= 1
    box = at.selectbox(key="explore_history_probe")
    labels = list(box.options)  # as shown
    assert all(label.startswith(("Probe sentence: ", "Test pair with gold links: ")) for label in labels), labels
    assert all(" ." not in label and "@@" not in label for label in labels)  # read back as text
    box.set_value(2).run()
    assert replay(at)["frames"] and not at.error


def test_both_replays_the_two_styles_on_one_axis_of_progress(app_env):
    at = start(explore_style="both")
    spec = replay(at)
    assert len([t for t in spec["data"] if t["type"] == "heatmap"]) == 2
    assert "Bahdanau: " in spec["layout"]["title"]["text"] and "Luong: " in spec["layout"]["title"]["text"]
    steps = [f["name"] for f in spec["frames"]]
    assert steps[0] == "0" and all(s.replace(",", "").isdigit() for s in steps)
    at.radio(key="explore_history_axis").set_value("epochs").run()
    by_epochs = replay(at)
    assert all("." in f["name"] for f in by_epochs["frames"]) and by_epochs["frames"][-1]["name"] == "2.00"


def test_both_in_a_narrow_column_stacks_one_replay_per_style(app_env):
    """Below the replay's 700 px layout the two maps would run into each other: one replay per style."""
    at = start(explore_style="both", explore_page_width=358)  # a phone's column
    assert not at.exception, at.exception
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    replays = [s for s in specs if s.get("frames")]
    assert len(replays) == 2
    assert [len([t for t in s["data"] if t["type"] == "heatmap"]) for s in replays] == [1, 1]
    assert any("too narrow" in c.value for c in at.caption)
    assert at.download_button(key="explore_history_html") is not None  # the download keeps both


def resave(folder: Path, change) -> None:
    """toyfr-general-luong of ``folder`` loaded, changed by ``change(translator)`` and saved again."""
    import streamlit as st

    path = folder / "toyfr-general-luong.safetensors"
    translator = load_checkpoint(path)
    change(translator)
    save(translator, path)
    st.cache_data.clear()


@pytest.fixture
def no_history(app_models_copy):
    """The app models, with toyfr-general-luong saved again without its history but with a recipe."""
    recipe = Recipe(
        "toyfr-general-luong",
        "toy-fr",
        {"n_train": 400, "n_valid": 40, "n_test": 40},
        model={"score": "general", "style": "luong"},
        train={"epochs": 1},
    )

    def drop_history(translator) -> None:
        translator.history = None
        translator.meta["recipe_full"] = recipe.to_dict()

    resave(app_models_copy, drop_history)
    return app_models_copy


def test_a_model_without_history_says_so_and_offers_to_retrain_it(no_history):
    at = start()
    assert not at.exception
    assert any("trained without an alignment history" in i.value for i in at.info)
    assert not [c for c in at.get("plotly_chart") if json.loads(c.proto.spec).get("frames")]
    at.button(key="explore_retrain_Luong").click().run()
    assert not at.exception
    captions = " ".join(c.value for c in at.caption)
    # the retraining never overwrites the model: it saves under the next free name
    assert "Will be saved as **toyfr-general-luong-2**" in captions.replace("\\", "")
    assert at.button(key="train_retrain_start") is not None


def test_the_train_form_suggests_a_free_name_and_shows_it(no_history):
    shutil.copy(no_history / "toyfr-general-luong.safetensors", no_history / "toy-fr-additive-luong.safetensors")
    at = AppTest.from_file(APP, default_timeout=60)
    at.switch_page("attnviz_app/app_pages/train/train.py").run()
    assert not at.exception
    assert at.text_input(key="train_name").value == "toy-fr-additive-luong-2"
    at.text_input(key="train_name").set_value("toyfr general luong").run()
    captions = " ".join(c.value for c in at.caption).replace("\\", "")
    assert "Will be saved as **toyfr-general-luong-2**" in captions


@pytest.fixture
def edited_aer(app_models_copy):
    """The app models, with toyfr-general-luong's history given the AER ``aer(k)`` at its k-th point."""

    def edit(aer) -> None:
        def set_aer(translator) -> None:
            for k, point in enumerate(translator.history.points):
                point["aer"] = aer(k)

        resave(app_models_copy, set_aer)

    return edit


def test_a_model_whose_aer_never_fell_below_a_half_reads_never_in_the_table(edited_aer):
    """(The table showed a raw None in two columns.)"""
    edited_aer(lambda k: 0.9)
    table = start().dataframe[0].value
    assert list(table["AER < 0.5 first at"]) == ["never"] and table["last AER"][0] == pytest.approx(0.9)


def test_the_table_says_the_step_and_epoch_where_the_aer_first_fell_below_a_half(edited_aer):
    edited_aer(lambda k: 0.9 if k < 3 else 0.3)
    at = start()
    (first,) = at.dataframe[0].value["AER < 0.5 first at"]
    point = load_checkpoint(Path(os.environ["ATTNVIZ_MODELS"]) / "toyfr-general-luong.safetensors").history.points[3]
    assert first == f"step {point['step']:,}, epoch {point['epochs']:.2f}"


def test_the_animation_is_named_after_the_probe_and_the_axis_it_shows(app_env, download_names):
    at = start()
    first = download_names["Download the animation (HTML, plays offline)"]
    at.selectbox(key="explore_history_probe").set_value(1).run()
    second = download_names["Download the animation (HTML, plays offline)"]
    at.radio(key="explore_history_axis").set_value("epochs").run()
    third = download_names["Download the animation (HTML, plays offline)"]
    assert len({first, second, third}) == 3 and first.startswith("attnviz-history-toyfr-general-luong-")
    assert first.endswith("-by-step.html") and third.endswith("-by-epochs.html"), (first, third)
    images = [json.loads(c.proto.config)["toImageButtonOptions"]["filename"] for c in at.get("plotly_chart")]
    assert third.removesuffix(".html") in images
