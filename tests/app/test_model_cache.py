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


def test_the_server_keeps_at_most_max_models_loaded_dropping_the_least_recently_used(monkeypatch):
    """Every model opened stayed loaded for the server's life (about 9 MB each, 500 MB after the shipped
    ones): the cache holds :data:`common.MAX_MODELS`, and the one used longest ago loads again."""
    loads = []

    def fake_load(path, roots=None):
        loads.append(path)
        return object()

    monkeypatch.setattr(common, "load", fake_load)
    st.cache_resource.clear()
    paths = [f"/models/m{i}.safetensors" for i in range(common.MAX_MODELS + 1)]
    first = common._shared_model(paths[0], 1.0)
    for path in paths[1:-1]:
        common._shared_model(path, 1.0)
    assert common._shared_model(paths[0], 1.0) is first  # used again: now the most recent
    common._shared_model(paths[-1], 1.0)  # one more than the cache holds: m1 goes
    assert common._shared_model(paths[0], 1.0) is first and len(loads) == common.MAX_MODELS + 1
    common._shared_model(paths[1], 1.0)
    assert loads[-1] == paths[1] and len(loads) == common.MAX_MODELS + 2
    st.cache_resource.clear()


def test_a_model_is_loaded_after_freed_memory_is_given_back(monkeypatch):
    """The weights of the models the cache let go would stay in the process (750 MB against 430 MB after
    every shipped model, benchmarks/model_cache.py): each load first gives freed memory back."""
    calls = []
    monkeypatch.setattr(common, "release_free_memory", lambda: calls.append("release") or True)
    monkeypatch.setattr(common, "load", lambda path, roots=None: calls.append("load") or object())
    st.cache_resource.clear()
    common._shared_model("/models/a.safetensors", 1.0)
    common._shared_model("/models/a.safetensors", 1.0)  # cached: neither
    assert calls == ["release", "load"]
    st.cache_resource.clear()


def test_the_server_lets_go_of_the_models_used_longest_ago_past_max_model_bytes(monkeypatch):
    """Sixteen of a user's big models would be 12-16 GB: past MAX_MODEL_BYTES of float32 weights
    the least recently used models go, and one model bigger than the bound still loads."""
    from types import SimpleNamespace

    loads = []

    def fake_load(path, roots=None):
        loads.append(path)
        parameters = 3 if "big" in path else 1
        return SimpleNamespace(model=SimpleNamespace(num_parameters=lambda: parameters * 2**20))  # 4 or 12 MiB

    monkeypatch.setattr(common, "load", fake_load)
    monkeypatch.setattr(common, "MAX_MODEL_BYTES", 10 * 2**20)
    monkeypatch.setattr(common, "_LOADED", type(common._LOADED)())
    st.cache_resource.clear()
    a = common._current_model("/models/a.safetensors", 1.0)
    b = common._current_model("/models/b.safetensors", 1.0)
    assert common._current_model("/models/a.safetensors", 1.0) is a  # 8 MiB: both kept, a used last
    common._current_model("/models/c.safetensors", 1.0)  # 12 MiB: b, used longest ago, goes
    assert list(common._LOADED) == ["/models/a.safetensors", "/models/c.safetensors"]
    assert common._current_model("/models/a.safetensors", 1.0) is a and len(loads) == 3
    assert common._current_model("/models/b.safetensors", 1.0) is not b and len(loads) == 4  # loaded again
    big = common._current_model("/models/big.safetensors", 1.0)  # 12 MiB alone: every other one goes
    assert list(common._LOADED) == ["/models/big.safetensors"]
    assert common._current_model("/models/big.safetensors", 1.0) is big
    st.cache_resource.clear()
