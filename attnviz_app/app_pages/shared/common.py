"""Model loading and choosing, shared by every page. No torch here: attnviz does the work."""

from __future__ import annotations

import re
import threading
import warnings
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

import streamlit as st

from attnviz.data import show_direction_marks
from attnviz.decoding import Alignment, Translator
from attnviz.devices import release_free_memory, use_server_threads
from attnviz.errors import AttnvizError, CheckpointError
from attnviz.server import checkpoint_folder, is_uploaded_checkpoint, session_checkpoints, uploaded_model
from attnviz.store import (
    ModelEntry,
    ModelWarning,
    absent_hint,
    absent_models,
    catalog_stamp,
    list_models,
    load,
    model_roots,
    pretrained_dir,
    read_header,
    visible_to,
)
from attnviz_app.app_pages.shared.keys import FILE_NAMES

if TYPE_CHECKING:
    from types import ModuleType

    from streamlit.delta_generator import DeltaGenerator

_MARKDOWN_SPECIAL = re.compile(r"[\\`*_{}\[\]()#+\-.!|<>~$:&=]")  # "=": a line of them is a heading
# where GFM links text even when escaped: before "://", between "www" and ".", before "@"
_AUTOLINK = re.compile(r"(?=\\://)|(?i:(?<=www)(?=\\\.))|(?=@)|(?<=\\:)(?=material/|streamlit\\:)")
# a line break in text shown on one line: Markdown would read the next line as a heading underline,
# a list or a code block
_LINE_BREAK = re.compile(r"\r\n?|\n|[\u2028\u2029\x85]")


MAX_MODELS = 16  # models the server keeps loaded (the least recently used goes): ~9 MB each, up to ~35 MB
MAX_MODEL_BYTES = 2 * 2**30  # and their float32 weights at most this (a user's big model is 0.5-2 GB)


@st.cache_resource(show_spinner="Loading model…", max_entries=MAX_MODELS)
def _shared_model(path: str, mtime: float) -> Translator:
    release_free_memory()  # the weights of the models the cache let go, before this one's are read
    return load(path, roots=model_roots())


# checkpoint path -> the version (mtime) of it in the cache and its weights' bytes, least recently used first
_LOADED: OrderedDict[str, tuple[float, int]] = OrderedDict()
_LOADED_LOCK = threading.Lock()


def _current_model(path: str, mtime: float) -> Translator:
    """The shared model of ``path`` as its file is now: one version a file in the cache. A file saved
    again (a training with --force, a save over it) drops the version before, which the cache would
    otherwise keep for the server's life; an ask for an older version (a translation cached before
    the save) gets the file's current one, the only one it holds. Past :data:`MAX_MODEL_BYTES` of
    weights the models used longest ago go (this one stays, however big)."""
    with suppress(OSError):  # gone: the load says so
        mtime = Path(path).stat().st_mtime
    with _LOADED_LOCK:
        before = _LOADED.pop(path, None)
    if before is not None and before[0] != mtime:
        _shared_model.clear(path, before[0])
    model = _shared_model(path, mtime)
    if before is not None and before[0] == mtime:
        size = before[1]  # counted when this version was loaded
    else:
        inner = getattr(model, "model", None)
        size = 4 * inner.num_parameters() if hasattr(inner, "num_parameters") else 0  # loaded as float32
    with _LOADED_LOCK:
        _LOADED[path] = (mtime, size)
        dropped = []
        while len(_LOADED) > 1 and sum(b for _, b in _LOADED.values()) > MAX_MODEL_BYTES:
            old, (old_mtime, _) = _LOADED.popitem(last=False)
            dropped.append((old, old_mtime))
    for old, old_mtime in dropped:
        _shared_model.clear(old, old_mtime)
    return model


def app_model_roots() -> list[Path]:
    """The folders this session may load checkpoints from: the model folders and, once it uploaded
    one, this server's uploaded checkpoints (its own are the only ones it lists)."""
    return [*model_roots(), *([checkpoint_folder()] if session_checkpoints(session_id()) else [])]


def load_model(path: str, mtime: float) -> Translator:
    """One shared, read-only model per checkpoint file (and version of it) for all sessions; a
    checkpoint this session uploaded comes from its upload (attnviz.server.uploaded_model), never
    from the shared cache, and another session's private model is refused.

    Decoding is thread-safe (no state is stored on modules); never train this object.
    """
    sid = session_id()
    own = uploaded_model(sid, path)
    if own is not None:
        return own
    if is_uploaded_checkpoint(path):
        raise CheckpointError("this uploaded checkpoint is not this session's, or it was removed; upload it again")
    model = _current_model(path, mtime)
    if sid and not visible_to(model.meta, sid):
        raise CheckpointError("this model was trained on another session's upload and is private to that session")
    return model


def model_version(entry: ModelEntry) -> tuple[str, float]:
    """``(path, mtime)`` of a catalog entry: the cache key of its model and its translations."""
    path = Path(entry.path)
    try:
        return str(path), path.stat().st_mtime
    except OSError as e:
        raise CheckpointError(f"the model file {path} is gone ({e.strerror}); pick another model") from e


def get_model(entry: ModelEntry) -> Translator:
    """The cached model of a catalog entry (reloaded when its file changes); sets this session
    thread's torch threads (``$ATTNVIZ_THREADS``, default 1) before it decodes."""
    use_server_threads()
    return load_model(*model_version(entry))


Overrides = tuple[tuple[int, tuple[float, ...]], ...]  # ((step, weights over the source), ...): hashable


@st.cache_data(max_entries=512, show_spinner=False)
def translate(path: str, mtime: float, text: str, beam: int = 1, overrides: Overrides = ()) -> Alignment:
    """A decode of ``text``, cached per (model file, version, text, beam, forced attention)."""
    use_server_threads()
    model = load_model(path, mtime)
    forced = {step: list(weights) for step, weights in overrides} or None
    return model.translate(text, beam_size=beam, n_best=beam if beam > 1 else None, overrides=forced)


@st.cache_data(max_entries=256, show_spinner=False)
def forced(path: str, mtime: float, source: str, target: str) -> Alignment:
    """The model's attention forced through ``target`` (:meth:`~attnviz.decoding.Translator.align`), cached per
    (model file, version, source, target)."""
    use_server_threads()
    return load_model(path, mtime).align(source, target)


@st.cache_data(max_entries=256, show_spinner=False)
def header_config(path: str) -> dict:
    """A checkpoint's model config (sizes, score, style) from its header, without loading weights."""
    try:
        return dict(read_header(Path(path)).get("config") or {})
    except (AttnvizError, OSError):
        return {}


def style_name(style: object) -> str:
    """A decoder style as the pages write it (``"luong"`` -> ``"Luong"``); an unknown one as it is."""
    return {"bahdanau": "Bahdanau", "luong": "Luong"}.get(str(style), str(style))


def escape_markdown(text: str) -> str:
    """``text`` shown literally by ``st.markdown``/``st.warning``: no emphasis, links, LaTeX or HTML.
    A bare URL, ``www.`` name or e-mail address, which Markdown links even escaped, gets a word joiner
    (U+2060, invisible) that breaks the link; a mark that turns the direction of the text after it
    (U+202A-U+202E, U+2066-U+2069) is shown as its code point instead."""
    text = _LINE_BREAK.sub(" ", show_direction_marks(text))
    return _AUTOLINK.sub("\u2060", _MARKDOWN_SPECIAL.sub(r"\\\g<0>", text))


def quoted(word: str) -> str:
    """A user's word quoted in a message, escaped and isolated (FSI…PDI), so that a right-to-left word
    keeps its place among the message's left-to-right words."""
    return f"“\u2068{escape_markdown(word)}\u2069”"


def session_id() -> str:
    """This browser session's id (stable across reruns); "" outside a Streamlit run."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else ""


def _models_of(viewer: str) -> tuple[list[ModelEntry], list[str]]:
    """The catalog as ``viewer`` may see it, and the warnings about entries it skipped: read again
    only when a model file, the manifest or a models folder changed (:func:`catalog_stamp`)."""
    return _listing(viewer, catalog_stamp())


@st.cache_data(max_entries=64, show_spinner=False)
def _listing(viewer: str, stamp: tuple) -> tuple[list[ModelEntry], list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ModelWarning)
        models = list_models(viewer=viewer or None)
    return models, [str(w.message) for w in caught if issubclass(w.category, ModelWarning)]


def session_models() -> list[ModelEntry]:
    """Every model this session may see: the catalog (without other sessions' upload-trained
    models) and the checkpoints this session uploaded."""
    sid = session_id()
    return [*_models_of(sid)[0], *session_checkpoints(sid)]


def refresh_models() -> None:
    """Forget the cached model list (a training just saved a model)."""
    _listing.clear()


def name_stored_file(path: Path, name: str) -> None:
    """Messages about the stored copy of an upload (named by content hash) will name it ``name``."""
    st.session_state.setdefault(FILE_NAMES, {})[str(path)] = name


def user_text(text: str) -> str:
    """A library message (an error, a note about data) for the page: stored upload paths replaced by
    the user's file names (no path of the server is shown), escaped (messages quote user text: never
    render it as Markdown)."""
    return escape_markdown(_with_file_names(text))


def _with_file_names(text: str) -> str:
    """``text`` with each stored upload's path replaced by the name the user gave the file."""
    for path, name in st.session_state.get(FILE_NAMES, {}).items():
        text = text.replace(path, name)
    return text


def error_text(error: Exception) -> str:
    """An error's message for the page (:func:`user_text`), as a sentence: the library's messages start
    in lower case and end without a full stop (the command line prints them after ``error:``); on the
    page a first word of plain lower-case letters is capitalised (not a name, a path, a code, or a
    formula's one-letter symbol such as g, where case is meaning, nor a user's file name that begins the
    message), and a message ending in a letter or digit gets its full stop."""
    named = _with_file_names(str(error))
    text = escape_markdown(named)
    first = text.split(" ", 1)[0]
    a_file = any(named.startswith(name) for name in st.session_state.get(FILE_NAMES, {}).values() if name)
    if first.isascii() and first.isalpha() and first.islower() and (len(first) > 1 or first == "a") and not a_file:
        text = text[0].upper() + text[1:]
    return text + "." if text[-1:].isalnum() else text


@contextmanager
def user_errors() -> Iterator[None]:
    """Show attnviz's input errors as a message instead of a traceback."""
    try:
        yield
    except AttnvizError as e:
        st.error(error_text(e))
        st.stop()


def require_models() -> list[ModelEntry]:
    """All models, or an explanation and a stop when there are none."""
    with user_errors():
        models, skipped = _models_of(session_id())
    models = [*models, *session_checkpoints(session_id())]
    for message in skipped:  # "skipped x.safetensors: ..." as the catalog's warning says it
        st.caption(f"⚠️ {escape_markdown(message[:1].upper() + message[1:])}")
    if not models:
        st.info("No models yet. Train one on the **Train** page, or rebuild the shipped ones (see docs/models.md).")
        st.stop()
    return models


@st.cache_data(ttl=30, show_spinner=False)
def _absent_hint(folder: str) -> str:
    return absent_hint(absent_models())


def absent_models_note(where: DeltaGenerator | ModuleType = st) -> None:
    """A caption saying which shipped models are not in this server's models folder (an installed
    package's Multi30k models) and how to get them; nothing when every shipped model is there.
    The text is the library's own, built from the shipped manifest: its command shows as code."""
    if hint := _absent_hint(str(pretrained_dir())):
        where.caption(f"ℹ️ {hint}")
