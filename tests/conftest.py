"""Shared fixtures: tiny corpora and tiny models that train in seconds on a CPU.

The fixture modules of ``tests/support`` are registered here, so every folder of tests can use
them: the tiny app models (``app_models_dir``, ``app_env``, ``media``) and the model folders
(``models``, ``model_file``, ``saved``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from attnviz.data.pairs import Corpus
from attnviz.data.token_cache import CACHE_ENV
from attnviz.training.config import TrainConfig
from attnviz.training.fit import fit
from tests.support.tiny import reverse_corpus, tiny_translator

pytest_plugins = ["tests.support.app_fixtures", "tests.support.model_folder", "tests.support.scores"]

torch.set_num_threads(1)


@pytest.fixture(scope="session", autouse=True)
def corpus_cache(tmp_path_factory) -> Iterator[Path]:
    """Multi30k's cached tokens (attnviz.data.token_cache) in a folder of this run, never the user's ~/.cache."""
    folder = tmp_path_factory.mktemp("corpus-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(CACHE_ENV, str(folder))
        yield folder


@pytest.fixture(scope="session", autouse=True)
def user_cache(tmp_path_factory) -> Iterator[Path]:
    """``$XDG_CACHE_HOME`` in a folder of this run: what the app caches there (Explore's front page,
    attnviz_app/app_pages/explore/front.py) never lands in the user's ~/.cache."""
    folder = tmp_path_factory.mktemp("xdg-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(folder))
        yield folder


@pytest.fixture(scope="session")
def corpus() -> Corpus:
    return reverse_corpus()


@pytest.fixture(scope="session")
def trained(corpus):
    """A tiny additive/Bahdanau model trained until it reverses its training data."""
    tr = tiny_translator(corpus, emb_dim=32, hidden_dim=48, attn_dim=32)
    fit(tr, corpus, TrainConfig(epochs=60, batch_size=8, lr=1e-2, patience=None, seed=0))
    return tr
