"""Explore's front page on a fresh server, drawn from disk while the library loads.

A fresh server's first visitor would otherwise wait for torch and the library (1 to 2 s on a
2-core machine, with the browser compiling Plotly meanwhile) before the first heatmap. So when
Explore draws its front page for a new visit (no link, the Weights view, one model, no warning),
it records what the top of that page shows: the sentence box's text, the translation line, the
view tabs and the heatmap's figure with its captions. The record is a JSON file in the cache
folder, keyed by the app's and the library's code, the installed Streamlit and Plotly, the model
folders and the model's file. The next fresh server draws that record at once, as the same
widgets in the same places (:func:`draw`), starts loading the library only then, and runs the real
page as soon as the library is loaded: the same box keeps what the user typed, the same map is
redrawn, and the sidebar's choices and the cell's arithmetic appear.

Nothing here imports torch or the library: this module is what a session can run before them.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable
from importlib import metadata, util
from pathlib import Path
from typing import Any

import streamlit as st

from attnviz_app import APP_DIR
from attnviz_app.app_pages.explore import screen
from attnviz_app.app_pages.shared.keys import EXPLORE_TEXT, EXPLORE_VIEW
from attnviz_app.app_pages.shared.state import defaults_were_shown

FORMAT = 1  # the record's layout: a new layout gets a new number
FILE_NAME = "explore-front.json"
TABS_KEY = "explore_view_tabs"  # the st.tabs widget: fed from, and writing to, EXPLORE_VIEW
HEADING = "Explore attention"  # the page's h1, for screen readers (compact_top)
BOX_LABEL = "Source sentence (press Enter to translate)"  # the hint stays in sight: the box is never empty
BOX_PLACEHOLDER = "Type a sentence and press Enter to translate"
BOX_HELP = "One sentence in the model's source language; the heatmaps are redrawn on Enter."
LEXICON_LABEL, LEXICON_KEY = "What can I type? The toy-fr lexicon", "explore_lexicon_open"  # toy-fr's expander
LOADING = "Loading the model choices and the cell's arithmetic (torch, once per server)…"
POLL_SECONDS = 0.25  # how often a page drawn from the record asks whether the library is loaded
WAIT_FOR_PAINT_SECONDS = 5.0  # how long the server's warm-up waits for a first visitor (ATTNVIZ_FIRST_PAINT_WAIT)
WAIT_ENV = "ATTNVIZ_FIRST_PAINT_WAIT"
GIVE_UP_SECONDS = 20.0  # a page drawn from the record this long ago loads the library itself (a failed warm-up)
_RECORDING = "_explore_front_recording"  # session state: the record being built by this run, or None
_VISITED = "_explore_front_visited"  # session state: this session has run Explore once
_POLLS = "_explore_front_polls"  # session state: how often the page drawn from the record has asked
_DRAWN_AT = "_explore_front_drawn_at"  # session state: when this session first drew the record (time.monotonic)
_DRAWN_ON = "_explore_front_drawn_on"  # session state: (text, view) of the record drawn, until the page takes over
painted = threading.Event()  # set when a session has drawn the record, or found none to draw
drawing = threading.Event()  # set when a session starts drawing the record
# held while a record's charts are validated by Plotly, and by the warm-up while it imports numpy and pandas:
# Plotly looks them up in sys.modules without importing them, and must never find one half imported
plotting = threading.Lock()


def compact_top() -> None:
    """Less empty space above the page's first widget while the sidebar is open, so a heatmap fits above
    the fold at 1280×720 (Streamlit's header is transparent then; with the sidebar closed, and on a
    phone, it is opaque and 3.75rem tall, so the sentence box's label starts below it), and the page's
    level-1 heading: read by screen readers and heading navigation, drawn nowhere (the navigation
    already names the page), its element taken out of the page's flow so it adds no gap, as is the
    width reporter's at the sidebar's top (screen.py)."""
    st.html(
        "<style>.block-container, [data-testid='stMainBlockContainer'] {padding-top: 4.2rem;}"
        " body:has([data-testid='stSidebar'][data-collapsed='false'])"
        " [data-testid='stMainBlockContainer'] {padding-top: 2.2rem;}"
        " [data-testid='stElementContainer']:has(.attnviz-unseen) {position: absolute;}"
        f" .st-key-{screen.REPORTER_KEY} {{position: absolute;}}"
        " .attnviz-unseen {position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0;"
        " overflow: hidden; clip-path: inset(50%); white-space: nowrap; border: 0;}</style>"
        f"<h1 class='attnviz-unseen'>{HEADING}</h1>"
    )


def first_paint_wait() -> float:
    """Seconds the warm-up waits for a first visitor: ``$ATTNVIZ_FIRST_PAINT_WAIT``, else (or where it
    is not a number of seconds) :data:`WAIT_FOR_PAINT_SECONDS`."""
    raw = os.environ.get(WAIT_ENV, "")
    try:
        seconds = float(raw) if raw.strip() else WAIT_FOR_PAINT_SECONDS
    except ValueError:
        seconds = WAIT_FOR_PAINT_SECONDS
    return seconds if 0 <= seconds < float("inf") else WAIT_FOR_PAINT_SECONDS


def wait_for_first_paint() -> None:
    """The server's warm-up, before it imports torch (which holds Python's lock): wait until a first
    visitor's browser has drawn the page from its record. With no visitor drawing it after
    :func:`first_paint_wait` seconds, stop waiting; a visitor whose page is being drawn by then (a slow
    browser, a loaded machine) is waited for up to :data:`GIVE_UP_SECONDS` more, after which its page
    would load the library itself."""
    if painted.wait(first_paint_wait()) or not drawing.is_set():
        return
    painted.wait(GIVE_UP_SECONDS)


def view_changed() -> None:
    """The tabs' on_change: the tab the user opened becomes the view Explore opens next."""
    st.session_state[EXPLORE_VIEW] = st.session_state[TABS_KEY]


def cache_file() -> Path | None:
    """``$XDG_CACHE_HOME/attnviz/explore-front.json`` (``~/.cache/...``); None without a home folder."""
    try:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    except RuntimeError:
        return None
    return base / "attnviz" / FILE_NAME


def _stat(path: str | Path) -> list:
    try:
        s = os.stat(path)
    except OSError:
        return [str(path), None, None]
    return [str(path), s.st_size, s.st_mtime_ns]


@functools.cache
def _code() -> tuple:
    """The app's and the library's source files (names, sizes, times) and the installed Streamlit and
    Plotly: read once a process, as the code it runs was loaded once, not at every new session's visit."""
    folders = [APP_DIR]
    spec = util.find_spec("attnviz")  # the package's folder, without importing it (and torch)
    if spec is not None and spec.submodule_search_locations:
        folders += [Path(p) for p in spec.submodule_search_locations]
    files = []
    for folder in folders:
        for root, dirs, names in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            files += [_stat(os.path.join(root, n)) for n in sorted(names) if n.endswith((".py", ".js", ".json"))]
    return [metadata.version(p) for p in ("streamlit", "plotly")], files


def _code_key() -> str:
    """A fingerprint of what draws the page: the code (:func:`_code`) and the environment that picks
    the models."""
    versions, files = _code()
    env = [os.environ.get(v) for v in ("ATTNVIZ_PRETRAINED", "ATTNVIZ_MODELS")]
    return hashlib.sha256(json.dumps([FORMAT, versions, env, files]).encode()).hexdigest()


def _fresh_visit() -> bool:
    """A session's first Explore run, opened without a link (the front page as a newcomer sees it)."""
    return not st.session_state.get(_VISITED) and not st.query_params


def start_recording() -> None:
    """At the top of Explore's run: record this run's front page if it is a fresh visit."""
    recording = {"lexicon": False, "lines": [], "charts": [], "captions": []}
    st.session_state[_RECORDING] = recording if _fresh_visit() else None
    st.session_state[_VISITED] = True


def recording() -> bool:
    """Whether this run records the front page (a fresh visit that drew nothing the record lacks)."""
    return st.session_state.get(_RECORDING) is not None


def record(part: str, value: Any) -> None:
    """Add ``value`` to the record's ``part`` ("lines", "charts", "captions"), or set it ("lexicon":
    toy-fr's closed expander under the box), when recording."""
    if not recording():
        return
    parts = st.session_state[_RECORDING]
    if isinstance(parts[part], list):
        parts[part].append(value)
    else:
        parts[part] = value


def stop_recording() -> None:
    """The run drew something the record does not hold (a warning, two panels, another view)."""
    st.session_state[_RECORDING] = None


def save_recording(text: str, views: list[str], view: str, model_files: list[str], folders: list[str]) -> None:
    """At the end of Explore's run: write the record, when this run recorded one and it is new.
    Writes go to a temporary file renamed into place: a reader sees a whole record or none."""
    recording = st.session_state.pop(_RECORDING, None)
    path = cache_file()
    if not recording or not recording["charts"] or path is None:
        return
    entry = {
        "format": FORMAT,
        "code": _code_key(),
        "files": [_stat(f) for f in [*model_files, *folders]],
        "text": text,
        "views": views,
        "view": view,
        **recording,
    }
    try:
        if path.exists() and json.loads(path.read_text(encoding="utf-8")) == entry:
            return
    except (OSError, ValueError):
        pass
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(entry), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:  # a read-only cache folder: the next server simply draws the page the long way
        with contextlib.suppress(OSError):
            tmp.unlink()


def load_record() -> dict | None:
    """The record, when it is whole and still true: same code, same model files. None otherwise
    (no file, a torn or foreign one, a changed model or a changed app)."""
    path = cache_file()
    try:
        entry = json.loads(path.read_text(encoding="utf-8")) if path else None
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT or not entry.get("charts"):
        return None
    try:
        if entry["code"] != _code_key() or any(_stat(f[0]) != f for f in entry["files"]):
            return None
        if not isinstance(entry["text"], str) or entry["view"] not in entry["views"]:
            return None
    except (KeyError, TypeError, IndexError):
        return None
    return entry


def draw(ready: Callable[[], bool]) -> bool:
    """Draw Explore's front page from its record while the library loads, and rerun the app once
    ``ready()`` says it is loaded. False (nothing drawn) when the library is loaded, this is not a
    fresh visit of the front page, there is no true record, or the user has typed another sentence
    meanwhile."""
    if ready() or _waited_too_long():
        _leave_record()
        return False
    if st.session_state.get(_VISITED) or st.query_params:
        painted.set()
        return False
    entry = load_record()
    if entry is None:
        painted.set()
        return False
    if _acted(entry["text"], entry["view"]):  # the user acted on the page drawn from the record: the page itself
        _leave_record()
        painted.set()
        return False
    drawing.set()
    st.session_state.setdefault(_DRAWN_AT, time.monotonic())
    st.session_state[_DRAWN_ON] = (entry["text"], entry["view"])
    compact_top()
    st.empty()  # where Explore's line on a link's unknown parts goes
    st.session_state.setdefault(EXPLORE_TEXT, entry["text"])
    st.text_input(BOX_LABEL, key=EXPLORE_TEXT, persist_state="session", help=BOX_HELP, placeholder=BOX_PLACEHOLDER)
    if entry.get("lexicon"):
        st.expander(LEXICON_LABEL, key=LEXICON_KEY, on_change="rerun")
    for line in entry["lines"]:
        st.columns(1)[0].markdown(line)
    st.session_state[TABS_KEY] = entry["view"]
    tabs = st.tabs(entry["views"], key=TABS_KEY, on_change=view_changed)
    with tabs[entry["views"].index(entry["view"])]:
        with plotting:
            for chart in entry["charts"]:
                st.plotly_chart(json.loads(chart["spec"]), key=chart["key"], width="content", config=chart["config"])
        for caption in entry["captions"]:
            st.caption(caption)
    with st.sidebar:
        st.caption(LOADING)
        _measure()
        _rerun_when(ready)
    return True


def _acted(text: str, view: str) -> bool:
    """Whether the user typed another sentence, opened another view or the lexicon than the record's."""
    typed = st.session_state.get(EXPLORE_TEXT, text) != text
    return bool(st.session_state.get(LEXICON_KEY) or typed or st.session_state.get(TABS_KEY, view) != view)


def _leave_record() -> None:
    """The page itself takes over from the record drawn in this session: if the user acted on the
    record, whether before the library was ready or after it, the first visit's URL stands for the
    record's defaults and the action is a new entry that Back leaves. Asked at each run of the page
    until one has written its URL (:func:`taken_over`): an Enter that cuts the page's first run short
    is an action on the record too."""
    drawn = st.session_state.get(_DRAWN_ON)
    if drawn is not None and _acted(*drawn):
        st.session_state.pop(_DRAWN_ON)
        defaults_were_shown()


def taken_over() -> None:
    """A run of the page itself has written its URL: the record drawn in this session is left."""
    st.session_state.pop(_DRAWN_ON, None)


@st.fragment
def _measure() -> None:
    """The browser's width reporter (screen.py) in a fragment of its own: its report reruns this
    fragment alone, not the record, and the page itself is then laid out for that width."""
    screen.reporter()


@st.fragment(run_every=POLL_SECONDS)
def _rerun_when(ready: Callable[[], bool]) -> None:
    """Drawn with the page, then run again by the browser every :data:`POLL_SECONDS`. The browser's
    first call comes once it is done compiling Plotly and drawing the map (its timers wait for
    that): only then may the server's warm-up load torch, whose import would slow both."""
    if st.session_state.get(_POLLS):
        painted.set()
    st.session_state[_POLLS] = st.session_state.get(_POLLS, 0) + 1
    if ready() or _waited_too_long():  # a warm-up that failed: the page loads the library, and says why
        st.rerun(scope="app")


def _waited_too_long() -> bool:
    drawn = st.session_state.get(_DRAWN_AT)
    return drawn is not None and time.monotonic() - drawn > GIVE_UP_SECONDS
