"""The cell cursor's readout shows the clicked cell's weight and score as the map's hover does: read
from the figure in the page (its z and customdata, or a local window's hover text), not sent again."""

from __future__ import annotations

import re

import pytest

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, WAIT_MS, app_server, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TEXT = "the+black+cat+eats+the+apple+."
HOVER = re.compile(r"weight: (\S+?)\s*score: (.+)$")


@pytest.fixture
def server(app_models_dir, tmp_path):
    with app_server(app_models_dir, tmp_path) as url:
        yield url


def _click_and_compare(page, values: str, t: int, s: int) -> str:
    """Click cell (t, s) of the ``values`` map, hover it, and check the readout against the hover."""
    plot = page.locator(f".st-key-explore_heat_{values}_Luong .js-plotly-plot")
    box = plot.locator(".nsewdrag").first.bounding_box()
    n_tgt = len(plot.locator(".ytick text").all_text_contents())
    n_src = len(plot.locator(".xtick text").all_text_contents())
    t, s = min(t, n_tgt - 1), min(s, n_src - 1)
    at = (box["x"] + (s + 0.5) * box["width"] / n_src, box["y"] + (t + 0.5) * box["height"] / n_tgt)
    page.mouse.click(*at)
    readout = page.locator(".attnviz-readout", has_text=f"t={t} “")
    readout.filter(has_text=f"s={s} “").first.wait_for(timeout=WAIT_MS)
    page.mouse.move(at[0] + 2, at[1] + 1)
    hover = plot.locator(".hoverlayer .hovertext").first
    hover.wait_for(timeout=WAIT_MS)
    numbers = HOVER.search(hover.text_content())
    text = readout.first.text_content()
    assert numbers, hover.text_content()
    assert text.endswith(f", weight {numbers[1]}, score {numbers[2]}"), (text, numbers.groups())
    return text


@pytest.mark.parametrize(("score", "tab"), [("general", "Raw scores"), ("local_p", "Weights")])
def test_the_readout_is_the_hovers_numbers(server, score, tab):
    """Raw scores (z the scores, customdata the weights) and a local window's map (its numbers only
    in the hover text, −∞ outside the window): the same numbers, written the same way."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(f"{server}/?task=toy-fr&score={score}&style=luong&text={TEXT}", wait_until="domcontentloaded")
        page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=WAIT_MS)
        if tab != "Weights":
            page.get_by_role("tab", name=tab, exact=True).click()
        values = "weights" if tab == "Weights" else "scores"
        page.locator(f".st-key-explore_heat_{values}_Luong .heatmaplayer").wait_for(timeout=WAIT_MS)
        settle(page, 1000)
        chart = f".st-key-explore_heat_{values}_Luong .js-plotly-plot"
        has_customdata = f"() => !!document.querySelector('{chart}')._fullData[0].customdata"
        assert page.evaluate(has_customdata) == (score != "local_p")  # a local window's numbers: in the text
        # a cell outside the local window (−∞ in its hover), or the last row's first cell
        outside = f"""() => {{ const text = document.querySelector('{chart}')._fullData[0].text || [];
          for (let t = text.length - 1; t >= 0; t--) {{ const s = text[t].findIndex(c => c.includes("−∞"));
            if (s >= 0) return [t, s]; }} return [99, 0]; }}"""
        cells = [(1, 2), tuple(page.evaluate(outside))]
        texts = [_click_and_compare(page, values, t, s) for t, s in cells]
        assert all("weight " in text for text in texts), texts
        assert score != "local_p" or texts[1].endswith("score −∞ (outside the local window)"), texts
        browser.close()


def test_clicks_still_answer_after_the_map_is_re_plotted(server):
    """A changed beam width re-plots the map in place in a window wider than the page's first guess
    (Plotly.newPlot drops every listener on the chart) without drawing the cursor again: the cursor sees
    the chart's new children and hooks it again, so a click after it still outlines its cell and reads
    its numbers."""
    from playwright.sync_api import sync_playwright

    chart = ".st-key-explore_heat_weights_Luong .js-plotly-plot"
    listeners = f"() => document.querySelector('{chart}')._ev.listeners('plotly_click').length"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(server, wait_until="domcontentloaded")
        page.locator(f"{chart} .heatmaplayer").wait_for(timeout=WAIT_MS)
        settle(page, 1500)
        _click_and_compare(page, "weights", 1, 2)
        slider = page.get_by_role("slider", name="Beam width")
        slider.focus()
        slider.press("ArrowRight")
        page.wait_for_function("() => new URL(location.href).searchParams.get('beam') === '2'", timeout=WAIT_MS)
        settle(page, 4000)
        assert page.evaluate(listeners) == 1
        text = _click_and_compare(page, "weights", 2, 1)
        assert text.startswith("t=2 “") and " s=1 “" in text, text
        browser.close()
