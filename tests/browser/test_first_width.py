"""Explore's first open is drawn once, for the browser's width (attnviz_app/app_pages/explore/screen.py):
in a wide window and on a phone the first run of the page already knows the main column's width, so
the map is drawn at its final size, is not taken off the page and redrawn by a second run, and fits
the column."""

from __future__ import annotations

import json
import os

import pytest

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


@pytest.mark.parametrize(("width", "height"), [(1920, 1080), (390, 844)])
def test_the_first_open_runs_the_page_once_for_the_window_s_width(tmp_path, width, height):
    from playwright.sync_api import sync_playwright

    log = tmp_path / "reruns.jsonl"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    env["ATTNVIZ_RERUN_LOG"] = str(log)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        with streamlit_app(env) as (url, _):
            page = browser.new_page(viewport={"width": width, "height": height}, is_mobile=width < 500)
            page.add_init_script(WATCH_MAP)
            page.goto(f"{url}/")
            page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=WAIT_MS)
            page.locator(FULL_PAGE).first.wait_for(state="attached", timeout=WAIT_MS)  # a phone's sidebar is shut
            page.wait_for_timeout(3000)  # the browser's width report, and a rerun it asked for, come within this
            maps, column = page.evaluate("window.__maps"), page.evaluate(COLUMN_JS)
        browser.close()
    runs = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    # a run cut short by the width's report (it only loaded the library) is marked so
    assert len([r for r in runs if not r.get("interrupted")]) == 1, runs
    assert len(maps) == 1, f"the map was redrawn: {maps}"
    assert int(maps[0]) <= column
