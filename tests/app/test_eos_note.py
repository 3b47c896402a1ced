"""Explore says when a decode parks its attention on the source <eos>, and names the guided twin."""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from attnviz.store import catalog
from attnviz_app.app_pages.explore.captions import EOS_NOTE_SHARE, eos_note
from tests.support.paths import APP

PLAIN, TWIN = "multi30k-de-en-additive-bahdanau", "multi30k-de-en-additive-bahdanau-guided"


def test_the_note_names_each_panel_over_the_share_and_its_twin():
    below = EOS_NOTE_SHARE - 0.01
    assert eos_note({"Luong": below, "Bahdanau": None}, {}, hidden=False) == ""
    one = eos_note({"Bahdanau": 0.58}, {"Bahdanau": TWIN}, hidden=False)
    assert one.startswith("This model puts 58% of this sentence's attention on the source `<eos>`")
    assert "*Hide `<eos>` and renormalise* shows the rest" in one and "guided twin" in one
    both = eos_note({"Bahdanau": 0.58, "Luong": 0.31}, {"Bahdanau": TWIN, "Luong": None}, hidden=True)
    assert both.startswith("Bahdanau puts 58% and Luong 31% of this sentence's attention on the source `<eos>`")
    assert both.count("hidden here") == 1 and "; Bahdanau's guided twin, " in both
    twins = eos_note({"Bahdanau": 0.58, "Luong": 0.31}, {"Bahdanau": "b-guided", "Luong": "l-guided"}, hidden=True)
    assert "; their guided twins, b\\-guided and l\\-guided in the checkpoint boxes, attend to words." in twins
    assert eos_note({"Bahdanau": 0.58, "Luong": 0.05}, {}, hidden=False).startswith("Bahdanau puts 58% of")


@pytest.fixture
def shipped_de_en():
    st.cache_data.clear()
    names = {m.name for m in catalog.list_models()}
    if not {PLAIN, TWIN} <= names:
        pytest.skip("the shipped de-en models are not here")
    yield
    st.cache_data.clear()


def _explore(**state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"task": "multi30k-de-en", "score": "additive", "style": "bahdanau"})
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def _note(at: AppTest) -> str:
    weights = [c.value for c in at.caption if c.value.startswith("Row $t$")]
    assert len(weights) == 1, [c.value for c in at.caption]
    return weights[0]


def test_explore_notes_a_plain_model_parked_on_eos_and_not_its_twin(shipped_de_en):
    at = _explore()
    assert not at.exception
    note = _note(at)
    assert "of this sentence's attention on the source `<eos>`" in note  # additive/Bahdanau parks over 20%
    assert "guided twin, multi30k\\-de\\-en\\-additive\\-bahdanau\\-guided" in note
    at.toggle(key="explore_eos").set_value(True).run()
    assert "hidden here" in _note(at)
    twin_path = next(m.path for m in catalog.list_models() if m.name == TWIN)
    at.selectbox(key="explore_checkpoint_bahdanau").set_value(twin_path).run()
    assert not at.exception and TWIN in " ".join(c.value.replace("\\", "") for c in at.sidebar.caption)
    assert "attention on the source `<eos>`" not in _note(at)  # the twin puts about 2% there
