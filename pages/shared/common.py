"""Model loading and choosing, shared by every page. No torch here: attnviz does the work."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from attnviz import catalog
from attnviz.errors import AttnvizError


@st.cache_resource(show_spinner="Loading model…")
def load_model(path: str, mtime: float):
    """One shared, read-only model per checkpoint file (and version of it) for all sessions.

    Decoding is thread-safe (no state is stored on modules); never train this object.
    """
    return catalog.load(path, roots=[catalog.PRETRAINED_DIR, catalog.models_dir()])


def get_model(entry: dict):
    """The cached model of a catalog entry (reloaded when its file changes)."""
    from pathlib import Path

    path = Path(entry["path"])
    return load_model(str(path), path.stat().st_mtime)


@st.cache_data(ttl=5, show_spinner=False)
def list_models() -> list[dict]:
    return catalog.list_models()


@contextmanager
def user_errors() -> Iterator[None]:
    """Show attnviz's input errors as a message instead of a traceback."""
    try:
        yield
    except AttnvizError as e:
        st.error(str(e))
        st.stop()


def model_label(entry: dict) -> str:
    return f"{entry['name']} · {entry['score']}/{entry['style']}"


def require_models() -> list[dict]:
    """All models, or an explanation and a stop when there are none."""
    with user_errors():
        models = list_models()
    if not models:
        st.info("No models yet. Train one on the **Train** page, or rebuild the shipped ones (see README).")
        st.stop()
    return models
