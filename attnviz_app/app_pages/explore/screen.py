"""How wide Explore's page is, measured in the browser: the maps are laid out for the columns
they are drawn in (two of them in Both), so that they fill a wide screen and fit a narrow one.

A hidden component in the sidebar reports the main column's content width when the page first
draws and when the window is resized; the server keeps it under :data:`WIDTH_KEY` and lays out
the next run's figures for it. Until the browser has answered (and in AppTest) the page is laid
out for a 1280 px window."""

from __future__ import annotations

import streamlit as st

WIDTH_KEY = "explore_page_width"  # int px: the main column's content width, from the browser
DEFAULT_WIDTH = 820  # the main column at a 1280 px window with the sidebar open (measured in Chromium)
MIN_WIDTH, MAX_WIDTH = 320, 4000  # a report outside this range is ignored
COLUMN_GAP = 16  # px between two st.columns(gap="small"): the maps' columns

_JS = """
function measure() {
  const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  if (!main) return null;
  const style = getComputedStyle(main);
  return Math.round(main.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight));
}
const LISTENERS = new Map();
export default function ({ data, key, setStateValue }) {
  let timer = null;
  const report = () => {
    const width = measure();
    if (width && Math.abs(width - (data.known || 0)) > 8) setStateValue("width", width);
  };
  const onResize = () => { clearTimeout(timer); timer = setTimeout(report, 400); };
  const old = LISTENERS.get(key);
  if (old) window.removeEventListener("resize", old);
  LISTENERS.set(key, onResize);
  window.addEventListener("resize", onResize);
  const first = setTimeout(report, 50);
  return () => { clearTimeout(first); clearTimeout(timer); window.removeEventListener("resize", onResize); };
}
"""
_reporter = st.components.v2.component("attnviz_page_width", html="<span></span>", js=_JS)


def _store() -> None:
    width = (st.session_state.get("explore_width_reporter") or {}).get("width")
    if isinstance(width, int | float) and MIN_WIDTH <= width <= MAX_WIDTH:
        st.session_state[WIDTH_KEY] = int(width)


def measure_page() -> None:
    """Mount the reporter (in the sidebar, where it takes no room from the page)."""
    with st.sidebar:
        _reporter(key="explore_width_reporter", data={"known": page_width()}, height=0, on_width_change=_store)


def page_width() -> int:
    """The main column's content width in px (the 1280 px window's until the browser has said)."""
    return int(st.session_state.get(WIDTH_KEY) or DEFAULT_WIDTH)


def column_width(n: int) -> int:
    """The width of one of ``n`` side-by-side columns."""
    return (page_width() - (n - 1) * COLUMN_GAP) // n
