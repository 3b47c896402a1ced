"""catalog_stamp: equal while nothing the catalog reads has changed; different once a model is added,
rewritten or removed, or the folder is another."""

from __future__ import annotations

import os

from attnviz.store import catalog_stamp
from attnviz.store.checkpoint import save
from tests.support.tiny import tiny_translator


def test_the_stamp_follows_the_models_folder(corpus, models, model_file):
    first = catalog_stamp()
    assert catalog_stamp() == first  # nothing changed
    other = save(tiny_translator(corpus), models / "other.safetensors")
    added = catalog_stamp()
    assert added != first
    os.utime(model_file, ns=(1, 1))  # a model rewritten (its time changes with it)
    touched = catalog_stamp()
    assert touched != added
    other.unlink()
    assert catalog_stamp() not in (first, added, touched)


def test_another_models_folder_is_another_stamp(models, tmp_path, monkeypatch):
    first = catalog_stamp()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.setenv("ATTNVIZ_MODELS", str(tmp_path / "elsewhere"))
    assert catalog_stamp() != first
    monkeypatch.setenv("ATTNVIZ_MODELS", str(tmp_path / "not-made-yet"))
    assert catalog_stamp()  # a folder that does not exist yet is a stamp too, not an error
