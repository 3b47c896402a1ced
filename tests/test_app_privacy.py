"""A model another session trained on its upload shows none of that upload in this session's pages
(issue 14, privacy between sessions): no example sentence, no test pairs, no data path."""

from __future__ import annotations

import shutil

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from attnviz import catalog
from attnviz.recipe import Recipe, run_recipe
from tests.test_app_toggle import APP
from tests.test_jobs import tiny_recipe

pytest_plugins = ["tests.app_fixtures"]  # app_models_dir

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
    monkeypatch.setattr(catalog, "MANIFEST", tmp_path / "no-manifest.json")
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
