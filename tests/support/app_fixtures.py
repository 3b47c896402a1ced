"""Tiny models for the app tests, trained once per session into a temporary models folder.

The app lists this folder through ``ATTNVIZ_MODELS``, so the tests do not depend on
``pretrained/``. Pretrained models (when shipped) are listed first by the catalog, so the app
tests also point the catalog's manifest at a missing file. ``media`` keeps what the download
buttons of a run would send.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from attnviz.data.spec import load_corpus
from attnviz.store.checkpoint import save
from attnviz.training.config import TrainConfig
from attnviz.training.fit import build_translator, fit

TINY = {"emb_dim": 16, "hidden_dim": 24, "attn_dim": 16, "dropout": 0.0}
# (file name, task, score, style): toy-fr opens first (a real-language task would), on general, the
# score it has in both decoder styles, in the Luong style
APP_MODELS = [
    ("dates-dot-luong", "dates", "dot", "luong"),
    ("toyfr-localp-luong", "toy-fr", "local_p", "luong"),
    ("toyfr-general-luong", "toy-fr", "general", "luong"),
    ("toyfr-general-bahdanau", "toy-fr", "general", "bahdanau"),
    ("toyfr-additive-bahdanau", "toy-fr", "additive", "bahdanau"),
]


def train_app_models(folder: Path, steps: int = 40) -> Path:
    """Train the tiny models of ``APP_MODELS`` into ``folder`` (a few seconds each)."""
    corpora = {task: load_corpus(task, n_train=400, n_valid=40, n_test=40) for task in ("dates", "toy-fr")}
    for name, task, score, style in APP_MODELS:
        corpus = corpora[task]
        translator = build_translator(corpus, seed=0, score=score, style=style, **TINY)
        fit(translator, corpus, TrainConfig(epochs=2, batch_size=32, lr=5e-3, max_steps=steps, patience=None))
        save(translator, folder / f"{name}.safetensors")
    return folder


@pytest.fixture(scope="session")
def app_models_dir(tmp_path_factory) -> Path:
    """A folder with the tiny app models (shared by every app test of the session)."""
    return train_app_models(tmp_path_factory.mktemp("app_models"))


@pytest.fixture
def app_env(app_models_dir, monkeypatch, tmp_path) -> Iterator[Path]:
    """``ATTNVIZ_MODELS`` set to the tiny models, shipped models hidden, Streamlit caches cleared before
    and after (a catalog cached without the shipped models must not outlive the test)."""
    import streamlit as st

    monkeypatch.setenv("ATTNVIZ_MODELS", str(app_models_dir))
    monkeypatch.setenv("ATTNVIZ_PRETRAINED", str(tmp_path / "no-pretrained"))
    st.cache_data.clear()
    yield app_models_dir
    st.cache_data.clear()


@pytest.fixture
def app_models_copy(app_models_dir, monkeypatch, tmp_path) -> Iterator[Path]:
    """A copy of the tiny models as ``ATTNVIZ_MODELS``, for a test to change (shipped models hidden,
    Streamlit caches cleared before and after, as :func:`app_env`)."""
    import shutil

    import streamlit as st

    folder = tmp_path / "models"
    shutil.copytree(app_models_dir, folder)
    monkeypatch.setenv("ATTNVIZ_MODELS", str(folder))
    monkeypatch.setenv("ATTNVIZ_PRETRAINED", str(tmp_path / "no-pretrained"))
    st.cache_data.clear()
    yield folder
    st.cache_data.clear()


@pytest.fixture
def media(monkeypatch) -> dict[str, tuple[bytes, str | None]]:
    """Every file a download button registers: file id (the stem of ``button.proto.url``) -> (data, file name)."""
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    saved: dict[str, tuple[bytes, str | None]] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def spy(self, path_or_data, mimetype, kind, filename=None):
        file_id = original(self, path_or_data, mimetype, kind, filename)
        data = path_or_data if isinstance(path_or_data, bytes) else path_or_data.encode()
        saved[file_id] = (data, filename)
        return file_id

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", spy)
    return saved


@pytest.fixture
def download_names(monkeypatch) -> dict[str, str | None]:
    """Each download button's label -> its file name. A deferred download's file name stays on the
    server, so it is read where the page gives it (``st.download_button`` or a column's)."""
    import streamlit as st
    from streamlit.delta_generator import DeltaGenerator

    names: dict[str, str | None] = {}
    real = DeltaGenerator.download_button

    def recorded(self, label, data, file_name=None, *args, **kwargs):
        names[label] = file_name
        return real(self, label, data, file_name, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "download_button", recorded)
    monkeypatch.setattr(st, "download_button", lambda *args, **kwargs: recorded(st._main, *args, **kwargs))
    return names
