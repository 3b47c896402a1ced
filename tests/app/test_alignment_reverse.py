"""The Alignment view's symmetric methods (AppTest, tiny Multi30k-layout models of both directions): each
shown model reads its own reverse model, in Both too, and the method chosen outlives a visit to
another page and travels in the link."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from attnviz.data.spec import load_corpus
from attnviz.store.checkpoint import save
from attnviz.training.config import TrainConfig
from attnviz.training.fit import build_translator, fit
from tests.support.multi30k import multi30k_folder
from tests.support.paths import APP

TEXT, REFERENCE = "Ein Hund rennt.", "A dog runs."
STYLES = ("bahdanau", "luong")


@pytest.fixture(scope="module")
def both_directions(tmp_path_factory) -> Path:
    """additive/Bahdanau and additive/Luong for de-en and for en-de, each a few steps trained."""
    folder = tmp_path_factory.mktemp("both_directions")
    data = multi30k_folder(folder / "multi30k")
    models = folder / "models"
    models.mkdir()
    for task in ("multi30k-de-en", "multi30k-en-de"):
        corpus = load_corpus(f"{task}@{data}")
        for style in STYLES:
            dims = {"emb_dim": 16, "hidden_dim": 24, "attn_dim": 16, "dropout": 0.0}
            translator = build_translator(corpus, seed=0, score="additive", style=style, **dims)
            fit(translator, corpus, TrainConfig(epochs=1, batch_size=4, lr=5e-3, max_steps=3, patience=None))
            save(translator, models / f"{task}-additive-{style}.safetensors")
    return models


@pytest.fixture
def reverse_app(both_directions, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("ATTNVIZ_MODELS", str(both_directions))
    monkeypatch.setenv("ATTNVIZ_PRETRAINED", str(tmp_path / "no-pretrained"))
    st.cache_data.clear()
    yield
    st.cache_data.clear()


def _open(style: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"task": "multi30k-de-en", "score": "additive", "style": style, "view": "Alignment"})
    at.session_state["explore_text"] = TEXT
    at.session_state["explore_align_reference"] = REFERENCE
    at.run()
    assert not at.exception, at.exception
    return at


def _plain(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)  # Markdown escapes: multi30k\-en\-de


def test_in_both_each_panel_symmetrises_with_its_own_styles_reverse_model(reverse_app):
    at = _open("both")
    at.segmented_control(key="explore_align_method").set_value("grow-diag-final").run()
    assert not at.exception, at.exception
    captions = [_plain(c.value) for c in at.caption]
    assert (
        "Reverse models: Bahdanau: multi30k-en-de-additive-bahdanau; Luong: multi30k-en-de-additive-luong" in captions
    )
    rules = [c for c in captions if "Links from attention: grow-diag-final" in c]
    assert len(rules) == 2, captions
    for style, rule in zip(STYLES, rules, strict=True):  # the panels in order: Bahdanau, then Luong
        assert f"grow-diag-final of this model's and multi30k-en-de-additive-{style}'s argmax links" in rule


def test_one_style_reads_its_reverse_and_the_method_outlives_another_page(reverse_app):
    at = _open("luong")
    at.segmented_control(key="explore_align_method").set_value("intersection").run()
    assert "Reverse model: multi30k-en-de-additive-luong" in [_plain(c.value) for c in at.caption]
    at.switch_page("attnviz_app/app_pages/learn.py").run()
    at.switch_page("attnviz_app/app_pages/explore/explore.py").run()
    assert not at.exception, at.exception
    assert at.segmented_control(key="explore_align_method").value == "intersection"
    link = {k: v[-1] if isinstance(v, list) else v for k, v in at.query_params.items()}
    assert link["links"] == "intersection" and link["view"] == "Alignment"  # a copied link opens on it

    fresh = AppTest.from_file(APP, default_timeout=60)
    fresh.query_params.update(link)
    fresh.run()
    assert not fresh.exception, fresh.exception
    assert fresh.segmented_control(key="explore_align_method").value == "intersection"
