"""What a newcomer reads, in Chromium at 1280x720 and 1920x1080: Compare's model chips show whole
names (a model and its guided twin differ), the beam's n-best tables show every column and every
translation whole, and an upload the app refuses says so in view, not below the sidebar's fold."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, WAIT_MS, app_server, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TWINS = ["toyfr-general-luong-with-a-long-name", "toyfr-general-luong-with-a-long-name-guided"]
SHOTS = os.environ.get("ATTNVIZ_SHOTS")  # a folder for the screenshots, to look at them
LONG = " ".join(["the black cat eats the apple of the girl ."] * 2)
COLUMNS = ["rank", "translation", "log p", "tokens", "log p / tokens"]  # the n-best table's

# each chip of the sidebar's model picker: its text, its title (the whole name) and whether it is cut
CHIPS_JS = """() => [...document.querySelectorAll(
    '[data-testid=stSidebar] [data-testid=stMultiSelect] [data-tag] > span')]
  .map(s => ({text: s.textContent, title: s.title, cut: s.scrollWidth > s.clientWidth + 1,
              right: s.getBoundingClientRect().right,
              box: s.closest('[data-testid=stMultiSelect]').getBoundingClientRect().right}))"""
# a static table wider than its place, or a cell whose text runs out of it
TABLES_JS = """() => [...document.querySelectorAll('[data-testid=stTable]')].flatMap((t, k) => {
  const out = [], box = t.getBoundingClientRect(), table = t.querySelector('table').getBoundingClientRect();
  if (table.right > box.right + 1)
    out.push(`table ${k} is ${Math.round(table.width)} px in ${Math.round(box.width)} px`);
  t.querySelectorAll('td, th').forEach(c => {
    if (c.scrollWidth > c.clientWidth + 1) out.push(`table ${k}: "${c.textContent}" is cut`);
  });
  return out;
})"""


@pytest.fixture
def server(app_models_dir, tmp_path):
    models = tmp_path / "models"
    shutil.copytree(app_models_dir, models)
    for name in TWINS:
        shutil.copyfile(models / "toyfr-general-luong.safetensors", models / f"{name}.safetensors")
    with app_server(models, tmp_path) as url:
        yield url


def shot(page, name: str, tmp_path) -> None:
    page.screenshot(path=f"{SHOTS or tmp_path}/{name}-{page.viewport_size['width']}.png")


def compare_chips(page, url: str) -> list[dict]:
    page.goto(f"{url}/compare", wait_until="domcontentloaded")
    picker = page.locator("[data-testid=stSidebar] [data-testid=stMultiSelect]").first
    picker.wait_for(timeout=WAIT_MS)
    settle(page)
    for name in TWINS:
        picker.locator("input").click()
        page.keyboard.type(name)
        page.get_by_role("option", name=name, exact=True).click()
        settle(page, 1000)
    page.keyboard.press("Escape")
    settle(page)
    return page.evaluate(CHIPS_JS)


def test_names_tables_and_upload_errors_read_whole(server, tmp_path):
    from playwright.sync_api import sync_playwright

    junk = tmp_path / "broken.safetensors"
    junk.write_bytes(b"not a checkpoint at all")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        for width, height in [(1280, 720), (1920, 1080)]:
            page = browser.new_page(viewport={"width": width, "height": height})
            chips = compare_chips(page, server)
            shot(page, "compare-chips", tmp_path)
            assert {c["title"] for c in chips} >= set(TWINS)
            for chip in chips:
                assert chip["text"] == chip["title"] and not chip["cut"], chip
                assert chip["right"] <= chip["box"] + 1, chip  # inside the picker
            assert page.evaluate(TABLES_JS) == []  # the free translations

            beam = f"{server}/?task=toy-fr&score=general&style=both&beam=3&view=Beam+search"
            page.goto(f"{beam}&text={LONG.replace(' ', '+')}", wait_until="domcontentloaded")
            page.locator("[data-testid=stTable]").nth(1).wait_for(timeout=WAIT_MS)
            settle(page)
            shot(page, "beam", tmp_path)
            assert page.locator("[data-testid=stTable] th").all_text_contents()[:5] == COLUMNS
            assert page.evaluate(TABLES_JS) == []
            first = page.locator("[data-testid=stMain] summary", has_text="#1 · ").inner_text()
            assert "Bahdanau: " in first and "Luong: " in first  # each side's translation and score

            sidebar = page.locator("[data-testid=stSidebar]")
            sidebar.get_by_text("Your own checkpoint").click()
            sidebar.locator("input[type=file]").set_input_files(str(junk), timeout=WAIT_MS)
            toast = page.locator("[data-testid=stToast]")
            toast.wait_for(timeout=WAIT_MS)
            shot(page, "upload-error", tmp_path)
            box = toast.bounding_box()
            assert "Not opened: broken.safetensors" in toast.inner_text()
            assert box["y"] >= 0 and box["y"] + box["height"] <= height and box["x"] + box["width"] <= width
            assert str(tmp_path) not in page.locator("body").inner_text()  # no server path
            page.close()
        browser.close()
