"""Your model, Hugging Face folder, in a real browser: a tiny Marian folder uploaded as a zip, a
sentence forced through its reference with gold links, the heads grid scored, a click on a map
opens that head, its word links scored against the gold; screenshots at 1280x720 and 1920x1080."""

from __future__ import annotations

import os
import zipfile

import pytest

pytest.importorskip("transformers")

OPEN_JS = """(index) => {
  const plot = document.querySelector('.js-plotly-plot'), layout = plot._fullLayout;
  const suffix = index === 1 ? '' : String(index), xa = layout['xaxis' + suffix], ya = layout['yaxis' + suffix];
  const box = plot.getBoundingClientRect();
  return {x: box.left + xa._offset + xa.l2p(0), y: box.top + ya._offset + ya.l2p(0)};
}"""  # the page position of cell (0, 0) of the grid's subplot number `index` (1-based, row by row)


def _enter(page, label: str, text: str) -> None:
    box = page.get_by_role("textbox", name=label).first
    box.fill(text)
    box.press("Enter")


@pytest.mark.browser
@pytest.mark.slow
def test_heads_grid_a_head_opened_and_scored_against_gold(tmp_path):
    from playwright.sync_api import sync_playwright

    from attnviz.plots.heads import GRID_TITLE
    from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, WAIT_MS, streamlit_app
    from tests.support.hf_models import GOLD, REFERENCE, SOURCE, marian_folder

    folder = marian_folder(tmp_path / "opus-mt-tiny")
    archive = tmp_path / "opus-mt-tiny.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for path in folder.iterdir():
            z.write(path, f"opus-mt-tiny/{path.name}")
    shots = tmp_path / "shots"
    shots.mkdir()
    env = {**os.environ, "HOME": str(tmp_path), "TMPDIR": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    with streamlit_app(env, tmp_path / "streamlit.log") as (url, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(f"{url}/yours", wait_until="domcontentloaded")
        page.get_by_text("Upload a zip").first.click(timeout=WAIT_MS)
        page.locator("input[type=file]").first.set_input_files(str(archive), timeout=WAIT_MS)
        page.get_by_text("3 decoder layers").first.wait_for(timeout=WAIT_MS)
        _enter(page, "Source sentence", SOURCE)
        page.get_by_text("Translation:").first.wait_for(timeout=WAIT_MS)
        _enter(page, "Reference translation (optional)", REFERENCE)
        page.get_by_text("Reference (forced):").first.wait_for(timeout=WAIT_MS)
        _enter(page, "Gold links of this pair (over words)", GOLD)
        page.get_by_text("Titles give each head's AER").first.wait_for(timeout=WAIT_MS)
        grid = page.locator(".js-plotly-plot").first
        grid.wait_for(timeout=WAIT_MS)
        grid.scroll_into_view_if_needed()
        titles = page.locator(".js-plotly-plot").first.locator(".annotation-text").all_text_contents()
        assert len([t for t in titles if t.startswith("L")]) == 12 and all(" · " in t for t in titles if t[0] == "L")
        assert grid.bounding_box()["width"] >= 740  # the page's column (about 786 px at 1280) in its expander
        assert grid.locator(".gtitle").text_content() == GRID_TITLE  # whole, never cut
        assert grid.locator(".xaxislayer-above text").count() >= 4 * 7  # the source words under the last row
        page.screenshot(path=str(shots / "grid-1280.png"), full_page=False)
        point = page.evaluate(OPEN_JS, 1 * 4 + 2 + 1)  # layer 1, head 2 of 4 heads a layer
        page.mouse.click(point["x"], point["y"])
        page.mouse.move(5, 5)
        page.locator(".gtitle", has_text="layer 1, head 2").first.wait_for(timeout=WAIT_MS)  # the opened head's map
        page.screenshot(path=str(shots / "head-opened-1280.png"), full_page=False)
        page.get_by_text("Word links and gold").first.click(timeout=WAIT_MS)
        page.get_by_text("AER = 1 −").first.wait_for(timeout=WAIT_MS)
        page.get_by_text("gold sure").first.wait_for(timeout=WAIT_MS)
        page.screenshot(path=str(shots / "head-scored-1280-full.png"), full_page=True)
        page.set_viewport_size({"width": 1920, "height": 1080})
        page.wait_for_timeout(1500)
        page.screenshot(path=str(shots / "head-scored-1920.png"), full_page=False)
        page.screenshot(path=str(shots / "head-scored-1920-full.png"), full_page=True)
        assert not page.get_by_text("Traceback").count()
        browser.close()
