"""Explore's front page drawn from its record on a fresh server (attnviz_app/app_pages/explore/front.py), in
Chromium: the first server records it, the next draws it before torch is loaded and then the page itself,
with what the user typed meanwhile kept and Back returning to the front page."""

from __future__ import annotations

import os
import time

import pytest

from attnviz_app.app_pages.explore import front
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, TICKS_JS, WAIT_MS, streamlit_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BOX = "input[aria-label^='Source sentence']"
FULL_PAGE = "[data-testid=stSidebar] [data-testid=stWidgetLabel]:has-text('Score function')"
BOX_HOLDS = f't => {{ const b = document.querySelector("{BOX}"); return b && b.value === t; }}'
# from the page's first node on, whether a heatmap was ever shown under the record's loading line and
# without the page's own sidebar: seen by the browser at each change, not by sampling it afterwards
WATCH_RECORD = """
window.__sawRecord = false;
new MutationObserver(() => {
  const side = document.querySelector("[data-testid=stSidebar]");
  if (window.__sawRecord || !side || !document.querySelector(".js-plotly-plot .heatmaplayer")) return;
  const labels = [...side.querySelectorAll("[data-testid=stWidgetLabel]")];
  const full = labels.some(e => e.textContent.includes("Score function"));
  if (!full && side.textContent.includes("Loading the model choices")) window.__sawRecord = true;
}).observe(document, {subtree: true, childList: true, characterData: true});
"""


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    """One cache folder for the servers of a test, as one user's servers share ~/.cache."""
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path)}


def test_a_fresh_server_draws_the_record_then_the_page_keeping_what_was_typed(env, tmp_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        with streamlit_app(env) as (url, _):  # the first server: the front page itself, recorded
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.goto(f"{url}/")
            page.locator(FULL_PAGE).first.wait_for(timeout=WAIT_MS)
            page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=WAIT_MS)  # may follow the sidebar
            front_ticks = page.evaluate(TICKS_JS)
            # the record is written at the end of the page's run, which may end well after its map is drawn
            record = tmp_path / "cache" / "attnviz" / "explore-front.json"
            deadline = time.monotonic() + WAIT_MS / 1000
            while not record.is_file() and time.monotonic() < deadline:
                time.sleep(0.1)
            page.close()
        assert record.is_file()
        # the next one: the record first, then the page; its warm-up waits for this visitor however slowly
        # the browser starts on a loaded machine (by default it goes on after 5 s without one)
        with streamlit_app({**env, front.WAIT_ENV: "120"}) as (url, _):
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.add_init_script(WATCH_RECORD)
            page.goto(f"{url}/")
            page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=WAIT_MS)
            drawn_from_record = page.evaluate("window.__sawRecord")
            assert page.evaluate(TICKS_JS) == front_ticks
            box = page.locator(BOX)
            front_text = box.input_value()
            box.fill("A girl is eating an apple.")
            box.press("Enter")
            page.wait_for_function(f"() => (({TICKS_JS})() || []).includes('apple')", timeout=WAIT_MS)
            page.locator(FULL_PAGE).first.wait_for(timeout=WAIT_MS)
            assert box.input_value() == "A girl is eating an apple."
            # the address follows the run's query parameters, which may land after the map is drawn
            page.wait_for_function("() => location.href.includes('text=A+girl')", timeout=WAIT_MS)
            page.go_back()
            page.wait_for_function(f"t => (({TICKS_JS})() || []).join() === t.join()", arg=front_ticks, timeout=WAIT_MS)
            page.wait_for_function(BOX_HOLDS, arg=front_text, timeout=WAIT_MS)  # the box follows the map
        browser.close()
    assert drawn_from_record, "the second server drew the page itself, not the record, before torch was loaded"
