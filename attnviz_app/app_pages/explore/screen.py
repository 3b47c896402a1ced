"""How wide Explore's page is, measured in the browser: the maps are laid out for the columns
they are drawn in (two of them in Both), so that they fill a wide screen and fit a narrow one.

A hidden component in the sidebar reports the main column's content width when the page first
draws and when the window is resized; the server keeps it under :data:`WIDTH_KEY` and lays out
the next run's figures for it. The component also keeps the width in a cookie
(:data:`COOKIE`), which the browser sends when it opens a session: a later visit from the same
browser (a reload, a new tab, a shared link, a restarted server) is laid out for its width from
its first run. Explore mounts the component first thing in its run (explore.py), so on a fresh
server a first visit's width arrives while the library loads and the run it cuts short has drawn
nothing yet; the page drawn from its record (front.py) mounts it in a fragment of its own. Until
the browser has answered (and in AppTest, where none does) the page is laid out for a 1280 px
window."""

from __future__ import annotations

import streamlit as st

WIDTH_KEY = "explore_page_width"  # int px: the main column's content width, from the browser
REPORTER_KEY = "explore_width_reporter"
COOKIE = "attnviz_width"  # the last width this browser reported (px); a year, this site's paths
DEFAULT_WIDTH = 820  # the main column at a 1280 px window with the sidebar open (measured in Chromium)
MIN_WIDTH, MAX_WIDTH = 320, 4000  # a report or cookie outside this range is ignored
COLUMN_GAP = 16  # px between two st.columns(gap="small"): the maps' columns

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
  const report = () => {
    const width = measure();
    if (!width) return;
    document.cookie = `${data.cookie}=${width}; path=/; max-age=31536000; SameSite=Lax`;
    if (Math.abs(width - data.known) > 8) setStateValue("width", width);
  };
  const soon = () => {  // the first frame in which the main column is laid out
    if (measure() || ++tries > 60) report(); else frame = requestAnimationFrame(soon);
  };
  const onResize = () => { clearTimeout(timer); timer = setTimeout(report, 400); };
  const old = LISTENERS.get(key);
  if (old) window.removeEventListener("resize", old);
  LISTENERS.set(key, onResize);
  window.addEventListener("resize", onResize);
  frame = requestAnimationFrame(soon);
  return () => { clearTimeout(timer); cancelAnimationFrame(frame); window.removeEventListener("resize", onResize); };
}
"""
_reporter = st.components.v2.component("attnviz_page_width", html="<span></span>", js=_JS)


def _valid(width: object) -> int | None:
    if isinstance(width, str):
        width = int(width) if width.isascii() and width.isdigit() and len(width) < 6 else None
    if isinstance(width, int | float) and MIN_WIDTH <= width <= MAX_WIDTH:
        return int(width)
    return None


def _store() -> None:
    width = _valid((st.session_state.get(REPORTER_KEY) or {}).get("width"))
    if width is not None:
        st.session_state[WIDTH_KEY] = width


def measure_page() -> None:
    """Mount the reporter in the sidebar (Explore's style, front.compact_top, takes it out of the
    sidebar's flow)."""
    with st.sidebar:
        reporter()


def reporter() -> None:
    """The component itself, where the caller is (front.py mounts it in a fragment of its own). It
    reports a width other than :func:`page_width`'s."""
    data = {"known": page_width(), "cookie": COOKIE}
    _reporter(key=REPORTER_KEY, data=data, height=0, on_width_change=_store)


def _remembered() -> int | None:
    """The width this browser reported on an earlier visit (:data:`COOKIE`), if it sent one."""
    try:
        return _valid(st.context.cookies.get(COOKIE))
    except Exception:  # no browser behind this session (a bare script run)
        return None


def page_width() -> int:
    """The main column's content width in px: the browser's report, else its cookie from an earlier
    visit, else a 1280 px window's."""
    return int(st.session_state.get(WIDTH_KEY) or _remembered() or DEFAULT_WIDTH)


def column_width(n: int) -> int:
    """The width of one of ``n`` side-by-side columns."""
    return (page_width() - (n - 1) * COLUMN_GAP) // n
