"""Both in Chromium: every view at 1280x720 and 1920x1080 with no text of a figure over another,
nothing cut (figure titles, tick labels, the math panel's formulas), each map filling its column on
a wide screen; and the figure for a paper, downloaded and opened, shows both maps."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, WAIT_MS, app_server, problems, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MEDIUM = " ".join(["the black cat eats the apple ."] * 3)  # 22 tokens with <eos>
LONG = " ".join(["the black cat eats the apple of the girl ."] * 4) + " the dog"  # 43 tokens with <eos>
VIEWS = [
    "Weights",
    "Raw scores",
    "Per step",
    "Context vectors",
    "Attribution",
    "Beam search",
    "Difference",
    "What-if",
    "Alignment",
    "Export",
]
SHOTS = os.environ.get("ATTNVIZ_SHOTS")  # a folder for the screenshots, to look at them

# each heatmap's width over its column's, for the maps drawn in columns
FILL_JS = """() => [...document.querySelectorAll('.js-plotly-plot')]
  .filter(gd => gd.querySelector('.heatmaplayer') && gd.closest('[data-testid="stColumn"]'))
  .map(gd => gd.querySelector('.main-svg').getBoundingClientRect().width
             / gd.closest('[data-testid="stColumn"]').getBoundingClientRect().width)"""


@pytest.fixture
def server(app_models_dir, tmp_path):
    with app_server(app_models_dir, tmp_path) as url:
        yield url


def open_both(page, server: str, text: str) -> None:
    url = f"{server}/?task=toy-fr&score=general&style=both&beam=3&text={text.replace(' ', '+')}"
    page.goto(url, wait_until="domcontentloaded")
    page.locator(".js-plotly-plot .heatmaplayer").nth(1).wait_for(timeout=WAIT_MS)
    settle(page)


def walk(page, where: str, shots: str | None) -> list[str]:
    found = []
    for view in VIEWS:
        page.get_by_role("tab", name=view).click()
        settle(page, 3000)
        if view == "What-if":  # the replaced word's maps too
            page.locator(".st-key-explore_replace_word input").fill("dog")
            page.locator(".st-key-explore_replace_word input").press("Enter")
            settle(page, 3000)
        if view == "Alignment" and page.locator(".st-key-explore_align_reference input").count():
            page.locator(".st-key-explore_align_reference input").fill("le chat noir mange la pomme .")
            page.locator(".st-key-explore_align_reference input").press("Enter")
            settle(page, 3000)
        assert page.locator("text=Traceback").count() == 0, f"{where} {view}"
        assert page.get_by_role("tab", name=view, selected=True).count() == 1, f"{where}: {view} stays open"
        found += problems(page, f"{where} {view}")
        if shots:
            page.screenshot(path=f"{shots}/both-{where}-{view.replace(' ', '-')}.png", full_page=True)
    return found


def test_every_view_in_both_fits_and_fills_the_screen(server, tmp_path):
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    shots = SHOTS or str(tmp_path)
    found: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        for (width, height), text in [((1920, 1080), MEDIUM), ((1280, 720), MEDIUM), ((1280, 720), LONG)]:
            page = browser.new_page(viewport={"width": width, "height": height})
            open_both(page, server, text)
            where = f"{width}x{height}-{len(text.split()) + 1}tokens"
            if width == 1920:  # each map fills its column (once Plotly has fitted it: slow on a loaded machine)
                filled = f"() => {{ const f = ({FILL_JS})(); return f.length === 2 && f.every(x => x > 0.85); }}"
                with contextlib.suppress(PlaywrightTimeout):
                    page.wait_for_function(filled, timeout=WAIT_MS)
                fill = page.evaluate(FILL_JS)
                assert len(fill) == 2 and all(f > 0.85 for f in fill), fill
                sizes = page.evaluate(
                    "() => [...document.querySelectorAll('.js-plotly-plot .gtitle')]"
                    ".slice(0, 2).map(t => parseFloat(getComputedStyle(t).fontSize))"
                )
                assert all(s >= 14 for s in sizes), sizes
            found += walk(page, where, shots)
            page.close()
        browser.close()
    if SHOTS:
        Path(SHOTS, "problems.txt").write_text("\n".join(found) + "\n")
    assert not found, "\n".join(found[:30])


def test_the_figure_for_a_paper_opens_and_shows_both_maps(server, tmp_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(accept_downloads=True, viewport={"width": 1280, "height": 720})
        page = context.new_page()
        open_both(page, server, "the cat eats .")
        with page.expect_download(timeout=WAIT_MS) as download:
            page.locator(".st-key-explore_paper_weights_html button").click()
        name = download.value.suggested_filename
        assert name.endswith(".html") and "general-bahdanau-vs-luong" in name, name  # both models, whole
        assert "the-cat-eats" in name, name
        path = tmp_path / name
        download.value.save_as(path)
        figure = context.new_page()
        figure.goto(path.as_uri(), wait_until="load")
        figure.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=WAIT_MS)
        figure.wait_for_timeout(1000)
        shown = figure.evaluate("""() => {
          const gd = document.querySelector('.js-plotly-plot');
          return {maps: gd.data.filter(t => t.type === 'heatmap').length,
                  axes: [...new Set(gd.data.filter(t => t.type === 'heatmap').map(t => t.coloraxis))],
                  drawn: document.querySelectorAll('.heatmaplayer .hm').length,
                  title: gd.querySelector('.gtitle').textContent,
                  titles: [...gd.querySelectorAll('.annotation-text')].map(a => a.textContent).join(' | ')};
        }""")
        assert shown["maps"] == 2 and shown["drawn"] == 2 and shown["axes"] == ["coloraxis"], shown
        assert "the cat eats" in shown["title"], shown
        assert "Bahdanau" in shown["titles"] and "Luong" in shown["titles"] and "general / Luong" in shown["titles"]
        assert not problems(figure, "figure for a paper")
        figure.screenshot(path=str(tmp_path / "paper-figure.png"))
        if SHOTS:
            figure.screenshot(path=f"{SHOTS}/paper-figure.png")
        browser.close()
