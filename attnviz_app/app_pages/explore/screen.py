"""How wide Explore's page is, measured in the browser: the maps are laid out for the columns
they are drawn in (two of them in Both), so that they fill a wide screen and fit a narrow one.

A hidden component in the sidebar reports the main column's content width when the page first
draws and when the window is resized; the server keeps it under :data:`WIDTH_KEY` and lays out
the next run's figures for it. Explore mounts it first thing in its run (:func:`measure_page`
with ``eager``), and a session's first run in a browser waits for its first report before it
lays out a figure (:func:`wait_for_width`): the report's rerun cuts that run short, and the page
is drawn once, for the browser's width, whatever the window's size. On a fresh server the report
arrives while the library loads, and the page drawn from its record (front.py) keeps the report
in the record's polling fragment, so neither waits. Until the browser has answered (and in
AppTest, where none does) the page is laid out for a 1280 px window."""

from __future__ import annotations

import time

import streamlit as st

WIDTH_KEY = "explore_page_width"  # int px: the main column's content width, from the browser
REPORTER_KEY = "explore_width_reporter"
DEFAULT_WIDTH = 820  # the main column at a 1280 px window with the sidebar open (measured in Chromium)
MIN_WIDTH, MAX_WIDTH = 320, 4000  # a report outside this range is ignored
COLUMN_GAP = 16  # px between two st.columns(gap="small"): the maps' columns
WAIT_SECONDS = 2.0  # the longest a session's first run waits for the browser's width
_WAITED = "_explore_width_waited"  # session state: this session's first run has waited once

_JS = """
function measure() {
  const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  if (!main || !main.clientWidth) return null;
  const style = getComputedStyle(main);
  return Math.round(main.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight));
}
const LISTENERS = new Map();
export default function ({ data, key, setStateValue }) {
  let timer = null, frame = null, tries = 0;
  const unknown = data.known === null || data.known === undefined;  // the server waits for this report
  const report = () => {
    const width = measure();
    if (width && (unknown || Math.abs(width - data.known) > 8)) setStateValue("width", width);
  };
  const soon = () => {  // the next frame, once the main column is laid out
    if (measure() || ++tries > 60) report(); else frame = requestAnimationFrame(soon);
  };
  const onResize = () => { clearTimeout(timer); timer = setTimeout(report, 400); };
  const old = LISTENERS.get(key);
  if (old) window.removeEventListener("resize", old);
  LISTENERS.set(key, onResize);
  window.addEventListener("resize", onResize);
  const first = unknown ? null : setTimeout(report, 50);
  if (unknown) frame = requestAnimationFrame(soon);
  return () => {
    clearTimeout(first); clearTimeout(timer); cancelAnimationFrame(frame);
    window.removeEventListener("resize", onResize);
  };
}
"""
_reporter = st.components.v2.component("attnviz_page_width", html="<span></span>", js=_JS)


def _store() -> None:
    width = (st.session_state.get(REPORTER_KEY) or {}).get("width")
    if isinstance(width, int | float) and MIN_WIDTH <= width <= MAX_WIDTH:
        st.session_state[WIDTH_KEY] = int(width)


def measure_page(eager: bool = False) -> None:
    """Mount the reporter in the sidebar (Explore's style, front.compact_top, takes it out of the
    sidebar's flow). ``eager``: it reports at once while the server has no width (see :func:`wait_for_width`);
    otherwise it reports only a width other than :func:`page_width`'s."""
    known = st.session_state.get(WIDTH_KEY) if eager else page_width()
    with st.sidebar:
        reporter(known)


def reporter(known: int | None) -> None:
    """The component itself, where the caller is (front.py mounts it in its polling fragment)."""
    _reporter(key=REPORTER_KEY, data={"known": known}, height=0, on_width_change=_store)


def wait_for_width() -> None:
    """Before a run lays out its first figure: in a session's first run in a browser, wait (at most
    :data:`WAIT_SECONDS`) for the eager reporter's first width. Its report reruns the app, which cuts
    this run short at the placeholder's next update; the run that follows knows the width. Nothing
    to wait for once the width is known, after one wait, or without a browser (AppTest)."""
    if st.session_state.get(WIDTH_KEY) or st.session_state.get(_WAITED) or not st.context.headers:
        return
    st.session_state[_WAITED] = True
    slot = st.empty()
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline and not st.session_state.get(WIDTH_KEY):
        time.sleep(0.02)
        slot.empty()  # a message to the browser: where Streamlit hands this run a rerun request


def page_width() -> int:
    """The main column's content width in px (the 1280 px window's until the browser has said)."""
    return int(st.session_state.get(WIDTH_KEY) or DEFAULT_WIDTH)


def column_width(n: int) -> int:
    """The width of one of ``n`` side-by-side columns."""
    return (page_width() - (n - 1) * COLUMN_GAP) // n
