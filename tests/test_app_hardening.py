"""Issue 14's defects as a user meets them in the app: a model another session trained on its upload
shows none of that upload here (no example sentence, no test pairs, no data path); trainings a killed
server left unfinished are offered on the Train page, kept or discarded there."""

from __future__ import annotations

import shutil

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from attnviz.store import catalog
from attnviz.training.recipes import Recipe, run_recipe
from tests.support.jobs import stranded_run, tiny_recipe
from tests.support.paths import APP

SECRET, GEHEIM = "secret", "geheim"


@pytest.fixture
def private_models(app_models_dir, tmp_path, monkeypatch):
    """The tiny app models plus ``private``: trained by another session on its upload."""
    folder = tmp_path / "models"
    shutil.copytree(app_models_dir, folder)
    upload = tmp_path / "upload.tsv"
    upload.write_text("en\tde\n" + "".join(f"{SECRET} {i} row\t{GEHEIM} {i}\n" for i in range(60)), encoding="utf-8")
    recipe = Recipe(**{**tiny_recipe("private", epochs=1).to_dict(), "data": f"{upload}?src=en&tgt=de"})
    run_recipe(recipe, folder / "private.safetensors", meta={"owner": "owner-session"})
    monkeypatch.setenv("ATTNVIZ_MODELS", str(folder))
    monkeypatch.setenv("ATTNVIZ_PRETRAINED", str(tmp_path / "no-pretrained"))
    st.cache_data.clear()
    return upload


def shown_text(at: AppTest) -> str:
    """Every value the page shows or holds in a widget, as one string."""
    parts = []
    for kind in ("markdown", "caption", "text", "info", "warning", "error", "code", "text_input", "toggle"):
        for element in getattr(at, kind):
            parts.append(str(getattr(element, "value", "")) + str(getattr(element, "label", "")))
    return "\n".join(parts)


def test_compare_shows_nothing_of_another_sessions_upload(private_models):
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("pages/compare.py").run()
    at.multiselect(key="cmp_models").set_value(["private", "toyfr-general-luong"]).run()
    assert not at.exception, at.exception
    assert at.multiselect(key="cmp_models").value[0] == "private"
    text = shown_text(at)
    assert SECRET not in text and GEHEIM not in text and str(private_models) not in text
    assert "cmp_use_pair" not in [t.key for t in at.toggle]  # its test pairs are not offered


@pytest.fixture
def stranded_models(app_models_dir, tmp_path, monkeypatch):
    """The tiny app models and two trainings a killed server left after their first epoch."""
    folder = tmp_path / "models"
    shutil.copytree(app_models_dir, folder)
    monkeypatch.setenv("ATTNVIZ_MODELS", str(folder))
    monkeypatch.setenv("ATTNVIZ_PRETRAINED", str(tmp_path / "no-pretrained"))
    st.cache_data.clear()
    for name in ("cut", "gone"):
        stranded_run(folder, name)
    return folder


def test_the_train_page_offers_unfinished_runs_and_keeps_or_discards_them(stranded_models):
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("pages/train/train.py").run()
    assert not at.exception, at.exception
    assert any("2 unfinished training(s)" in e.label for e in at.expander)
    assert any("1 of 3 epochs done" in m.value for m in at.markdown)
    at.button(key="train_keep_cut").click().run()
    assert not at.exception, at.exception
    assert (stranded_models / "cut.safetensors").is_file()
    at.button(key="train_discard_gone").click().run()
    assert not at.exception, at.exception
    assert not any("unfinished training" in e.label for e in at.expander)
    assert "cut" in [m["name"] for m in catalog.list_models()]
