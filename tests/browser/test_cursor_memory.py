"""The cell cursor lets go of the maps Streamlit takes off the page: switching between two map tabs
keeps the browser's DOM at one tab's worth, not one more dead tab at every switch (a listener
left on an unmounted chart kept that chart and its whole tab alive)."""

from __future__ import annotations

import pytest

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, WAIT_MS, app_server, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SWITCHES = 8


@pytest.fixture
def server(app_models_dir, tmp_path):
    with app_server(app_models_dir, tmp_path) as url:
        yield url


def _nodes(page, cdp) -> int:
    """DOM nodes alive after a full garbage collection, detached ones included."""
    page.wait_for_timeout(500)
    for _ in range(2):
        cdp.send("HeapProfiler.collectGarbage")
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return int(metrics["Nodes"])


def test_switching_map_tabs_does_not_keep_the_old_tabs_alive(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        cdp = page.context.new_cdp_session(page)
        cdp.send("Performance.enable")
        page.goto(f"{server}/?task=toy-fr&score=general&style=both&text=the+cat+eats+.", wait_until="domcontentloaded")
        page.locator(".js-plotly-plot .heatmaplayer").nth(1).wait_for(timeout=WAIT_MS)
        settle(page)
        start = _nodes(page, cdp)
        one_tab = page.evaluate("() => document.getElementsByTagName('*').length")
        for k in range(SWITCHES):
            page.get_by_role("tab", name="Raw scores" if k % 2 == 0 else "Weights", exact=True).click()
            page.locator(".js-plotly-plot .heatmaplayer").nth(1).wait_for(timeout=WAIT_MS)
            settle(page)
        after = _nodes(page, cdp)
        browser.close()
    # a dead tab kept at every switch would add SWITCHES tabs' worth; a collector that has not yet
    # reclaimed the last one or two leaves at most that much
    assert after - start < 2 * one_tab, (start, after, one_tab)
