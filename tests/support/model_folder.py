"""Fixtures of model folders and checkpoints (registered in ``tests/conftest.py``).

``models`` is an empty folder that ``ATTNVIZ_MODELS`` names, the working directory beside it;
``model_file`` is a tiny model saved there as ``good``; ``saved`` is a tiny local_p/LSTM model
(with metrics) saved in the test's temporary folder.
"""

from __future__ import annotations

import pytest

from attnviz.store.checkpoint import save
from tests.support.tiny import tiny_translator


@pytest.fixture
def models(tmp_path, monkeypatch):
    folder = tmp_path / "models"
    folder.mkdir()
    monkeypatch.setenv("ATTNVIZ_MODELS", str(folder))
    monkeypatch.chdir(tmp_path)
    return folder


@pytest.fixture
def model_file(corpus, models):
    tr = tiny_translator(corpus)
    tr.meta.update({"task": "reverse", "example": "a b c"})
    return save(tr, models / "good.safetensors")


@pytest.fixture
def saved(corpus, tmp_path):
    tr = tiny_translator(corpus, score="local_p", style="luong", encoder="lstm", cell="lstm")
    tr.meta["metrics"] = {"bleu": 12.5}
    return tr, save(tr, tmp_path / "m.safetensors")
