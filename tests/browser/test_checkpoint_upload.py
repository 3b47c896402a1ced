"""Your own checkpoint in a real browser: Chromium uploads a copy of a shipped checkpoint in
Explore's sidebar; it opens at once (its translation on the page, its name in the checkpoint
picker) at 1280x720 and 1920x1080; a fresh browser context (another session) sees nothing of it;
closing the tab deletes it once the reconnect window has passed."""

from __future__ import annotations

import os
import shutil
import time

import pytest

from tests.support.paths import ROOT

MODEL = "toy-fr-general-luong"
NAME = "my-own-model"


@pytest.mark.browser
@pytest.mark.slow
def test_an_uploaded_checkpoint_opens_for_its_tab_only_and_goes_with_it(tmp_path):
    from playwright.sync_api import sync_playwright

    from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, WAIT_MS, streamlit_app

    upload = tmp_path / f"{NAME}.safetensors"
    shutil.copyfile(ROOT / "pretrained" / f"{MODEL}.safetensors", upload)
    env = {
        **os.environ,
        "TMPDIR": str(tmp_path),
        "HOME": str(tmp_path),
        "ATTNVIZ_MODELS": str(tmp_path / "models"),
        "STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": "2",
    }
    root = tmp_path / f"attnviz-uploads-{os.getuid()}"  # store.upload_root() under its TMPDIR
    with streamlit_app(env) as (url, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(url, wait_until="domcontentloaded")
        page.locator(".js-plotly-plot").first.wait_for(timeout=WAIT_MS)
        sidebar = page.locator("[data-testid=stSidebar]")
        sidebar.get_by_text("Your own checkpoint").click(timeout=WAIT_MS)
        sidebar.locator("input[type=file]").set_input_files(str(upload), timeout=WAIT_MS)
        sidebar.get_by_text(f"Opened {NAME}").wait_for(timeout=WAIT_MS)
        page.get_by_text(f"· {NAME}:").first.wait_for(timeout=WAIT_MS)  # its translation line
        page.locator(".js-plotly-plot").first.wait_for(timeout=WAIT_MS)
        assert NAME in sidebar.inner_text()  # the checkpoint picker shows it
        [stored] = [f for f in root.glob("server-*/checkpoints/*.safetensors")]
        page.screenshot(path=str(tmp_path / "upload-1280x720.png"))
        page.set_viewport_size({"width": 1920, "height": 1080})
        page.wait_for_timeout(1500)
        page.screenshot(path=str(tmp_path / "upload-1920x1080.png"))

        other = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
        other.goto(url, wait_until="domcontentloaded")
        other.locator(".js-plotly-plot").first.wait_for(timeout=WAIT_MS)
        other_sidebar = other.locator("[data-testid=stSidebar]")
        other_sidebar.get_by_text("Your own checkpoint").click(timeout=WAIT_MS)
        other_sidebar.locator("input[type=file]").wait_for(state="attached", timeout=WAIT_MS)
        other.wait_for_timeout(1000)
        assert NAME not in other.locator("body").inner_text()
        other.screenshot(path=str(tmp_path / "other-session-1280x720.png"))

        page.close()
        deadline = time.monotonic() + 60
        while stored.exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        browser.close()
        assert not stored.exists()
