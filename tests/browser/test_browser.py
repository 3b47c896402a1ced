"""The Explore page in a real browser: ``streamlit run app.py`` driven by Playwright on Chromium.

Measures (a) the time from starting ``streamlit run`` to the first heatmap drawn in Chromium and
(b) the time from pressing Enter on a new sentence to the heatmap redrawn with its tokens, and
writes them to ``benchmarks/results/browser_timings.json``. Set ``ATTNVIZ_SCREENSHOT=path`` to also copy
the screenshot there (``docs/screenshot.png`` for the README).
"""

from __future__ import annotations

import functools
import json
import os
import platform
import shutil
import statistics
import time

import pytest

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, TICKS_JS, WAIT_MS, streamlit_app
from tests.support.paths import ROOT

TIMINGS = ROOT / "benchmarks" / "results" / "browser_timings.json"
SENTENCES = {  # by the task of the app's default model
    "toy-fr": ["the dog eats the apple .", "the girl does not see the black cat .", "my friend likes the red car ."],
    "dates": ["monday 3rd of march 1997", "12/05/2001", "july 4, 1776"],
}
LONG = {"toy-fr": " ".join(["the black cat eats the apple of the girl ."] * 7)}  # 70 tokens

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def shown(tokens: list[str]) -> list[str]:
    """Tick labels as the browser shows them: the escaped HTML decoded again, spaces as ␣."""
    return [t.replace(" ", "␣") if t else "∅" for t in tokens]


@functools.cache
def default_model():
    """The model the app opens on (attnviz.store's defaults) and its task."""
    from attnviz.store import front_entry, list_models, load, task_of

    entry = front_entry(list_models())
    return load(entry.path), task_of(entry)


def expected_ticks(text: str) -> list[str]:
    """What the app's default model makes of ``text``."""
    return shown(default_model()[0].source(text).surface)


def wait_for_ticks(page, ticks: list[str]) -> None:
    page.wait_for_function(
        f"expected => JSON.stringify(({TICKS_JS})()) === JSON.stringify(expected)", arg=ticks, timeout=WAIT_MS
    )


def type_sentence(page, text: str) -> float:
    """Type ``text``, press Enter, wait for the redrawn heatmap; seconds from Enter to redrawn."""
    box = page.locator(".st-key-explore_text input")
    box.fill(text)
    ticks = expected_ticks(text)
    start = time.perf_counter()
    box.press("Enter")
    wait_for_ticks(page, ticks)
    return time.perf_counter() - start


def click_cell(page, col: int, n_src: int) -> None:
    """Click the last row's cell in column ``col``; the math panel must switch to that cell."""
    box = page.locator(".js-plotly-plot .nsewdrag").first.bounding_box()
    n_tgt = len(page.locator(".js-plotly-plot").first.locator(".ytick text").all_text_contents())
    row = n_tgt - 1  # the default cell is on row 0
    page.mouse.click(box["x"] + (col + 0.5) * box["width"] / n_src, box["y"] + (row + 0.5) * box["height"] / n_tgt)
    page.get_by_text(f"t={row} “", exact=False).filter(has_text=f"s={col} “").first.wait_for(timeout=WAIT_MS)


@pytest.fixture
def server_env(app_models_dir, tmp_path, monkeypatch) -> dict[str, str]:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install it with `apt-get install -y chromium` (CI does)")
    pytest.importorskip("playwright.sync_api", reason="pip install playwright (never `playwright install`)")
    monkeypatch.setenv("ATTNVIZ_MODELS", str(app_models_dir))  # for expected_ticks in this process
    home = tmp_path / "home"
    home.mkdir()
    return {
        **os.environ,
        "ATTNVIZ_MODELS": str(app_models_dir),
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),  # Explore's front-page record: this server's own (app_server)
        "OMP_NUM_THREADS": "1",
    }


SCROLL_JS = """() => { const main = document.querySelector('[data-testid="stMain"]');
  const plot = document.querySelector('.js-plotly-plot');
  return [main.scrollTop, JSON.stringify(plot._fullLayout.yaxis.range)]; }"""


def wheel_scrolls_the_page(page) -> None:
    """The mouse wheel over a heatmap scrolls the page and leaves the map's axes as they were (Plotly's
    scroll zoom would zoom the map instead, and a page scrolled past a figure would zoom it)."""
    page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollTo(0, 0)")
    box = page.locator(".js-plotly-plot .heatmaplayer").first.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + min(box["height"] / 2, 100))
    top, axis = page.evaluate(SCROLL_JS)
    page.mouse.wheel(0, 300)
    page.wait_for_timeout(600)
    scrolled, still = page.evaluate(SCROLL_JS)
    assert scrolled > top and still == axis, (top, scrolled, axis, still)


def test_explore_in_chromium(server_env, tmp_path):
    default_model.cache_clear()  # ATTNVIZ_MODELS was just set
    from playwright.sync_api import sync_playwright

    with streamlit_app(server_env, tmp_path / "streamlit.log") as (url, start), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        page.goto(f"{url}/", wait_until="domcontentloaded")
        # A fresh server first shows a placeholder chart while torch imports; the real page
        # has the sentence box filled with the model's example.
        page.wait_for_function(
            "() => { const el = document.querySelector('.st-key-explore_text input'); return el && el.value; }",
            timeout=WAIT_MS,
        )
        default_text = page.locator(".st-key-explore_text input").input_value()
        wait_for_ticks(page, expected_ticks(default_text))
        first_heatmap = time.perf_counter() - start

        task = default_model()[1]
        sentences = SENTENCES.get(task, [default_text.upper(), default_text])
        redraws = [type_sentence(page, text) for text in sentences]
        click_cell(page, col=1, n_src=len(expected_ticks(sentences[-1])))
        page.wait_for_timeout(500)  # let Plotly finish its last paint before the screenshot
        shot = tmp_path / "explore.png"
        page.screenshot(path=str(shot), full_page=True)

        long_redraw = None
        if task in LONG:
            long_redraw = type_sentence(page, LONG[task])
            page.wait_for_timeout(500)
            page.screenshot(path=str(tmp_path / "explore-long.png"), full_page=True)
        assert page.locator("text=Traceback").count() == 0
        wheel_scrolls_the_page(page)
        browser.close()
    result = {
        "start_to_first_heatmap_s": round(first_heatmap, 3),
        "enter_to_redrawn_heatmap_s": [round(r, 3) for r in redraws],
        "enter_to_redrawn_heatmap_median_s": round(statistics.median(redraws), 3),
        "enter_to_redrawn_long_sentence_s": round(long_redraw, 3) if long_redraw else None,
        "long_sentence_tokens": len(expected_ticks(LONG[task])) if task in LONG else None,
        "model": default_model()[1] + ": " + default_model()[0].config.score + "/" + default_model()[0].config.style,
        "goals_s": {"start_to_first_heatmap": 5.0, "enter_to_redrawn_heatmap": 0.4},
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Chromium headless",
        "load_average_1min": round(os.getloadavg()[0], 2),  # other work on the machine slows every figure
        "measured": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    print(json.dumps(result, indent=1))
    if os.environ.get("ATTNVIZ_RECORD_TIMINGS"):  # benchmarks/README.md: how the figures are taken
        TIMINGS.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    if target := os.environ.get("ATTNVIZ_SCREENSHOT"):
        shutil.copyfile(shot, target)
    assert len(redraws) == len(sentences)  # every sentence was drawn (each wait has its own timeout)
