"""Explore laid out for the browser's width from a visit's first run (attnviz_app/app_pages/explore/screen.py):
the width reporter keeps the main column's width in a cookie, so a later visit from the same browser, in a
wide window or on a phone, runs the page once, draws the map once at its final size (never taken off the
page and redrawn) and fits the column."""

from __future__ import annotations

import json
import os
import time

import pytest

from attnviz_app.app_pages.explore import screen
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, WAIT_MS, streamlit_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]
FULL_PAGE = "[data-testid=stSidebar] [data-testid=stWidgetLabel]:has-text('Score function')"
# from the page's first node on: the first heatmap's width at each change, "" while there is none
WATCH_MAP = """
window.__maps = [];
new MutationObserver(() => {
  const layer = document.querySelector('.js-plotly-plot .heatmaplayer');
  const svg = layer && layer.closest('.js-plotly-plot').querySelector('.main-svg');
  const now = svg ? svg.getAttribute('width') : '';
  if (window.__maps.length ? window.__maps[window.__maps.length - 1] !== now : now) window.__maps.push(now);
}).observe(document, {subtree: true, childList: true, attributes: true});
"""
COLUMN_JS = """() => {
  const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  const style = getComputedStyle(main);
  return Math.round(main.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight));
}"""


IDLE_JS = "() => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"


def _quiet(page, log) -> int:
    """Wait until the page's session has ended its runs: the page idle and the rerun log unchanged for
    1.5 s (a busy machine may still be running the rerun a report asked for); its line count then."""
    seen, since = -1, time.monotonic()
    deadline = since + WAIT_MS / 1000
    while time.monotonic() < deadline:
        page.wait_for_function(IDLE_JS, timeout=WAIT_MS)
        count = len(log.read_text(encoding="utf-8").splitlines()) if log.exists() else 0
        if count != seen:
            seen, since = count, time.monotonic()
        elif time.monotonic() - since >= 1.5:
            return count
        page.wait_for_timeout(250)
    raise AssertionError(f"the first visit's session kept running: {seen} runs logged")


@pytest.mark.parametrize(("width", "height"), [(1920, 1080), (390, 844)])
def test_a_later_visit_runs_the_page_once_for_the_window_s_width(tmp_path, width, height):
    from playwright.sync_api import sync_playwright

    log = tmp_path / "reruns.jsonl"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    env["ATTNVIZ_RERUN_LOG"] = str(log)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": width, "height": height}, is_mobile=width < 500)
        with streamlit_app(env) as (url, _):
            first = context.new_page()  # the first visit: measured in the browser, kept in a cookie
            first.goto(f"{url}/")
            first.locator(FULL_PAGE).first.wait_for(state="attached", timeout=WAIT_MS)  # a phone's sidebar is shut
            first.wait_for_function("n => document.cookie.includes(n + '=')", arg=screen.COOKIE, timeout=WAIT_MS)
            runs_before = _quiet(first, log)  # the first visit's runs, a rerun its report asked for among them
            first.close()
            page = context.new_page()  # a later visit (a new tab): the cookie goes with the session's request
            page.add_init_script(WATCH_MAP)
            page.goto(f"{url}/")
            page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=WAIT_MS)
            page.locator(FULL_PAGE).first.wait_for(state="attached", timeout=WAIT_MS)
            page.wait_for_timeout(3000)  # a width report, and a rerun it would ask for, come within this
            maps, column = page.evaluate("window.__maps"), page.evaluate(COLUMN_JS)
        browser.close()
    runs = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()[runs_before:]]
    assert len(runs) == 1, runs
    assert len(maps) == 1, f"the map was redrawn: {maps}"
    assert int(maps[0]) <= column
