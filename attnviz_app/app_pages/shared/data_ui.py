"""Choosing a data set (built-in task, Multi30k, an uploaded file) for the Train and Data pages."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import urlencode

import streamlit as st

from attnviz.data import TASKS, Corpus, default_multi30k, is_file_spec, load_corpus, summarize
from attnviz.data import table_columns as read_table_columns
from attnviz.errors import AttnvizError
from attnviz.server import MAX_UPLOAD_MB, MAX_UPLOAD_ROWS, hold_upload, release_upload, store_upload
from attnviz_app.app_pages.shared.common import error_text, escape_markdown, name_stored_file, session_id
from attnviz_app.app_pages.shared.keys import SHARED_UPLOAD, UPLOAD_SPEC
from attnviz_app.app_pages.shared.uploads import session_holder

if TYPE_CHECKING:
    from streamlit.runtime.uploaded_file_manager import UploadedFile

UPLOAD_TYPES = ["csv", "tsv", "jsonl", "json", "parquet"]
MULTI30K_PAIRS = ["de-en", "en-de", "fr-en", "en-fr", "de-fr", "fr-de"]


@st.cache_data(show_spinner=False, max_entries=4, scope="session")
def table_columns(path: Path) -> list[str]:
    """The text columns of an uploaded table (uploads are named by content hash), as the loader reads them."""
    return read_table_columns(path)


class SharedUpload(NamedTuple):
    path: str  # the stored copy (see attnviz.server.upload_ledger)
    name: str  # the file name as uploaded
    kept_rows: int | None  # the rows kept of a file over the limits (see attnviz.server.upload_ledger), else None
    file_id: str  # Streamlit's id of the upload: the same upload is not hashed and stored again


def _cut_note(shared: SharedUpload) -> None:
    if shared.kept_rows is not None:
        st.warning(
            f"{escape_markdown(shared.name)} holds more than an upload may here ({MAX_UPLOAD_ROWS:,} rows "
            f"or {MAX_UPLOAD_MB} MB of text): only its first {shared.kept_rows:,} rows are used. To use other "
            "rows, upload a file of those rows."
        )


def _store(upload: UploadedFile, old: SharedUpload | None, session: str) -> SharedUpload | None:
    """Store a new upload for this session; the one it replaces is released (deleted unless
    another session or a training holds it) with this session's corpora of it."""
    limit_mb = st.get_option("server.maxUploadSize")
    if upload.size > limit_mb * 2**20:  # the uploader refuses these; other clients may not
        st.error(
            f"{escape_markdown(upload.name)} is {upload.size / 2**20:.0f} MB, above the limit of {limit_mb} MB "
            "per upload; upload a sample of its rows."
        )
        return None
    try:
        stored = store_upload(upload.getvalue(), upload.name, session, session_holder(session))
    except AttnvizError as e:  # a file that would decode to more than the server may hold
        st.error(f"{escape_markdown(upload.name)}: {error_text(e)}")
        return None
    if old and Path(old.path) != stored.path:
        release_upload(Path(old.path), session)
        _upload_corpus.clear()  # this session's cache only
    return SharedUpload(str(stored.path), upload.name, stored.kept_rows, upload.file_id)


def _shared_upload(key: str) -> tuple[Path, str] | None:
    """This session's upload, from this page's uploader or from another page's. A new upload
    replaces the old one (uploads never pile up per session); see attnviz.server.upload_ledger for when
    the stored copy is deleted."""
    upload = st.file_uploader("A table of sentence pairs", type=UPLOAD_TYPES, key=f"{key}_upload")
    session = session_id()
    old = st.session_state.get(SHARED_UPLOAD)
    if upload is not None and (old is None or old.file_id != upload.file_id or not Path(old.path).is_file()):
        shared = _store(upload, old, session)
        if shared is None:
            return None
        st.session_state[SHARED_UPLOAD] = old = shared
    elif old and Path(old.path).is_file():
        hold_upload(Path(old.path), session, session_holder(session))
        if upload is None:
            st.caption(
                f"Using {escape_markdown(old.name)}, uploaded earlier in this session; upload another to replace it."
            )
    else:
        st.info("Upload a CSV, TSV, JSON Lines or Parquet file with one column per language.")
        return None
    _cut_note(old)
    return Path(old.path), old.name


def _upload_spec(key: str) -> str | None:
    shared = _shared_upload(key)
    if shared is None:
        return None
    path, name = shared
    name_stored_file(path, name)  # messages name the file as the user did, not its stored copy
    try:
        columns = table_columns(path)
    except AttnvizError as e:
        st.error(error_text(e))
        return None
    src = st.selectbox("Source column", columns, index=0, key=f"{key}_src_col", persist_state="session")
    tgt = st.selectbox("Target column", columns, index=1, key=f"{key}_tgt_col", persist_state="session")
    if all(any(c.isspace() for c in name.strip()) for name in (src, tgt)):  # names like sentences
        st.caption(
            "The column names are the file's first line. If that line is a sentence pair, it is not read as one: "
            "start the file with a header line such as `en,fr` (TSV: `en` and `fr` apart by a tab)."
        )
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


def select_task(key: str, task: str) -> bool:
    """Set the widgets of :func:`pick_data` (keyed ``key``) to a built-in task or a Multi30k pair
    before they are drawn; False for data they cannot name (an uploaded file, a missing Multi30k)."""
    pair = task.removeprefix("multi30k-")
    if task in TASKS:
        st.session_state[f"{key}_kind"], st.session_state[f"{key}_task"] = "Built-in task", task
    elif task.startswith("multi30k-") and pair in MULTI30K_PAIRS and default_multi30k().is_dir():
        st.session_state[f"{key}_kind"], st.session_state[f"{key}_m30k"] = "Multi30k", pair
    else:
        return False
    return True


def pick_data(key: str, default_task: str = "toy-fr") -> tuple[str, str] | None:
    """Widgets for a data source; returns ``(spec, label)`` or ``None`` while incomplete."""
    kinds = ["Built-in task"]
    if default_multi30k().is_dir():
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


def cached_corpus(
    spec: str, n_train: int | None = None, n_valid: int | None = None, n_test: int | None = None, **options
) -> Corpus:
    """A corpus, loaded once per spec and options (uploads are named by content hash)."""
    options = tuple(sorted({"n_train": n_train, "n_valid": n_valid, "n_test": n_test, **options}.items()))
    return (_upload_corpus if is_file_spec(spec) else _shared_corpus)(spec, options)


@st.cache_resource(show_spinner="Loading data…", max_entries=8)
def _shared_corpus(spec: str, options: tuple) -> Corpus:
    """Built-in tasks and Multi30k: one object for every session, read and never changed by the pages (a
    copy per rerun, as a data cache hands out, took 0.7 s for Multi30k)."""
    return load_corpus(spec, **dict(options))


@st.cache_data(show_spinner=False, max_entries=8)
def corpus_summary(spec: str, n_train: int | None, n_valid: int | None, n_test: int | None) -> dict:
    """:func:`~attnviz.data.summarize` of :func:`cached_corpus` (a second over Multi30k's vocabularies),
    once per data and sizes, not on every rerun of the Data page."""
    return summarize(cached_corpus(spec, n_train, n_valid, n_test))


@st.cache_data(show_spinner="Loading data…", max_entries=2, scope="session")
def _upload_corpus(spec: str, options: tuple) -> Corpus:
    """Files (uploads): each session's own, at most two, freed by Streamlit when the session disconnects."""
    return load_corpus(spec, **dict(options))
