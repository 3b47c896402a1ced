"""The app's model list is read again only when the models changed (catalog_stamp), not every few seconds."""

from __future__ import annotations

from attnviz.store.checkpoint import save
from attnviz_app.app_pages.shared import common
from tests.support.tiny import tiny_translator


def test_the_listing_is_kept_until_a_model_file_changes(corpus, models, model_file, monkeypatch):
    reads = []
    real = common.list_models
    monkeypatch.setattr(common, "list_models", lambda **kw: reads.append(kw) or real(**kw))
    common.refresh_models()
    names = [m.name for m in common._models_of("session-a")[0]]
    assert "good" in names
    common._models_of("session-a")
    assert len(reads) == 1  # the same models: the listing kept
    save(tiny_translator(corpus), models / "fresh.safetensors")
    assert "fresh" in [m.name for m in common._models_of("session-a")[0]]
    assert len(reads) == 2
    common.refresh_models()
