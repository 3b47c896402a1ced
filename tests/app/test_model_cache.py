"""The app's shared model cache holds one version of a checkpoint file: a file saved again drops the
version before (a server kept every version for its life), and an ask for an older version gets the
file as it is now."""

from __future__ import annotations

import gc
import os
import weakref

import streamlit as st

from attnviz.store import save
from attnviz_app.app_pages.shared import common
from tests.support.tiny import tiny_translator


def test_a_checkpoint_saved_again_drops_its_older_version(corpus, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNVIZ_MODELS", str(tmp_path))
    st.cache_resource.clear()
    path = tmp_path / "mine.safetensors"
    save(tiny_translator(corpus), path)
    os.utime(path, (1_000_000, 1_000_000))
    first = common.load_model(str(path), 1_000_000.0)
    kept = weakref.ref(first)
    assert common.load_model(str(path), 1_000_000.0) is first  # shared while the file is unchanged

    save(tiny_translator(corpus, score="general"), path)  # saved again, as a training with --force does
    os.utime(path, (2_000_000, 2_000_000))
    second = common.load_model(str(path), 2_000_000.0)
    assert second.config.score == "general"
    assert common.load_model(str(path), 1_000_000.0) is second  # a stale ask: the file as it is now
    del first
    gc.collect()
    assert kept() is None  # the older version is no longer held by the cache
    st.cache_resource.clear()
