"""Choosing a data set (built-in task, Multi30k, an uploaded file) for the Train and Data pages."""

from __future__ import annotations

import hashlib
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from attnviz.data import DEFAULT_MULTI30K, TASKS, load_corpus
from attnviz.data.pairs import Corpus
from pages.shared.common import escape_markdown

UPLOAD_TYPES = ["csv", "tsv", "jsonl", "json", "parquet"]
MULTI30K_PAIRS = ["de-en", "en-de", "fr-en", "en-fr", "de-fr", "fr-de"]
UPLOAD_DIR = Path(tempfile.gettempdir()) / "attnviz-uploads"
UPLOAD_TTL = 6 * 3600.0  # seconds an upload may go unused before it is deleted


def save_upload(upload) -> Path:
    """Write an upload to a temp file named by its content hash (never by the user's file name)."""
    data = upload.getvalue()
    suffix = Path(upload.name).suffix.lower()
    suffix = suffix if suffix.lstrip(".") in UPLOAD_TYPES else ".csv"
    UPLOAD_DIR.mkdir(parents=True, exist_ok=True)
    path = UPLOAD_DIR / f"{hashlib.sha256(data).hexdigest()[:20]}{suffix}"
    if not path.exists():
        path.write_bytes(data)
    path.touch()  # in use: not stale
    forget_stale_uploads()
    return path


def forget_stale_uploads(max_age: float = UPLOAD_TTL) -> None:
    """Delete uploads no session has used for ``max_age`` seconds, and their cached corpora, so
    that uploads cannot fill the disk over the server's life."""
    now = time.time()
    stale = [p for p in UPLOAD_DIR.glob("*") if p.is_file() and now - p.stat().st_mtime > max_age]
    for p in stale:
        p.unlink(missing_ok=True)
    if stale:
        cached_corpus.clear()


def table_columns(path: Path) -> list[str]:
    """Column names of an uploaded table; raises ValueError-like errors on malformed files."""
    fmt = path.suffix.lstrip(".")
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    if fmt in ("jsonl", "json"):
        frame = pd.read_json(path, lines=fmt == "jsonl", nrows=5) if fmt == "jsonl" else pd.read_json(path)
        return [str(c) for c in frame.columns]
    return [str(c) for c in pd.read_csv(path, sep="\t" if fmt == "tsv" else ",", nrows=5, dtype=str).columns]


SHARED_UPLOAD = "upload_shared"  # (saved path, file name as uploaded): one upload for Data and Train
UPLOAD_SPEC = "upload_spec"  # (data spec with its columns, file name): the upload's pairs for Compare


def _shared_upload(key: str) -> tuple[Path, str] | None:
    """This session's upload, from this page's uploader or from another page's. A new upload
    replaces the old one, whose file is deleted (uploads never pile up per session)."""
    upload = st.file_uploader("A table of sentence pairs", type=UPLOAD_TYPES, key=f"{key}_upload")
    old = st.session_state.get(SHARED_UPLOAD)
    if upload is not None:
        path = save_upload(upload)
        if old and Path(old[0]) != path:
            Path(old[0]).unlink(missing_ok=True)
            cached_corpus.clear()
        st.session_state[SHARED_UPLOAD] = (str(path), upload.name)
        return path, upload.name
    if old and Path(old[0]).is_file():
        Path(old[0]).touch()  # in use: not stale
        st.caption(f"Using {escape_markdown(old[1])}, uploaded earlier in this session; upload another to replace it.")
        return Path(old[0]), old[1]
    st.info("Upload a CSV, TSV, JSON Lines or Parquet file with one column per language.")
    return None


def _upload_spec(key: str) -> str | None:
    shared = _shared_upload(key)
    if shared is None:
        return None
    path, name = shared
    try:
        columns = table_columns(path)
    except Exception as e:  # pandas/pyarrow raise many types for a malformed file
        st.error(f"Cannot read the columns of {escape_markdown(name)}: {escape_markdown(str(e))}. "
                 f"Check that it is a {path.suffix[1:]} table.")  # fmt: skip
        return None
    if len(columns) < 2:
        st.error(f"{escape_markdown(name)} has {len(columns)} column(s); it needs a source and a target column.")
        return None
    src = st.selectbox("Source column", columns, index=0, key=f"{key}_src_col", persist_state="session")
    tgt = st.selectbox("Target column", columns, index=1, key=f"{key}_tgt_col", persist_state="session")
    spec = f"{path}?{urlencode({'src': src, 'tgt': tgt})}"
    st.session_state[UPLOAD_SPEC] = (spec, name)  # Compare offers its pairs
    return spec


def uploaded_pairs(limit: int = 200) -> tuple[list, str] | None:
    """This session's upload as sentence pairs (its test split, else train), with its file name."""
    shared = st.session_state.get(UPLOAD_SPEC)
    if not shared or not Path(shared[0].split("?")[0]).is_file():
        return None
    corpus = cached_corpus(shared[0])
    pairs = corpus.test or corpus.train
    return pairs[:limit], shared[1]


def pick_data(key: str, default_task: str = "toy-fr") -> tuple[str, str] | None:
    """Widgets for a data source; returns ``(spec, label)`` or ``None`` while incomplete."""
    kinds = ["Built-in task"]
    if DEFAULT_MULTI30K.is_dir():
        kinds.append("Multi30k")
    kinds.append("Uploaded file")
    kind = st.radio("Data", kinds, key=f"{key}_kind", persist_state="session", horizontal=True)
    if kind == "Built-in task":
        tasks = list(TASKS)
        task = st.selectbox(
            "Task",
            tasks,
            index=tasks.index(default_task),
            key=f"{key}_task",
            persist_state="session",
            format_func=lambda t: t,
        )
        st.caption(TASKS[task])
        return task, task
    if kind == "Multi30k":
        pair = st.selectbox("Language pair", MULTI30K_PAIRS, key=f"{key}_m30k", persist_state="session")
        return f"multi30k-{pair}", f"multi30k-{pair}"
    spec = _upload_spec(key)
    return (spec, "uploaded file") if spec else None


@st.cache_data(show_spinner="Loading data…", max_entries=8)
def cached_corpus(
    spec: str,
    n_train: int | None = None,
    n_valid: int | None = None,
    n_test: int | None = None,
    seed: int = 0,
    target_lowercase: bool | None = None,
    **options,
) -> Corpus:
    """A corpus, loaded once per spec and options (uploads are named by content hash)."""
    return load_corpus(
        spec, n_train=n_train, n_valid=n_valid, n_test=n_test, seed=seed, target_lowercase=target_lowercase, **options
    )
