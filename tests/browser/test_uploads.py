"""A closed tab frees its upload, in a real browser: Chromium uploads a file to ``streamlit run`` and
closes the tab; the stored file is deleted once the reconnect window has passed."""

from __future__ import annotations

import os
import time

import pytest

from tests.support.tables import ROWS


@pytest.mark.browser
@pytest.mark.slow
def test_a_closed_tab_frees_its_upload(tmp_path):
    """``streamlit run`` with a 2 s reconnect window: Chromium uploads a file on the Data page and
    closes the tab; the stored file is deleted (and the server's memory of it freed) soon after."""
    from playwright.sync_api import sync_playwright

    from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, streamlit_app

    table = tmp_path / "pairs.csv"
    table.write_text(ROWS, encoding="utf-8")
    env = {
        **os.environ,
        "TMPDIR": str(tmp_path),
        "HOME": str(tmp_path),
        "STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": "2",
    }
    root = tmp_path / f"attnviz-uploads-{os.getuid()}"  # store.upload_root() under its TMPDIR
    with streamlit_app(env) as (url, _), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{url}/data", wait_until="domcontentloaded")
        page.get_by_text("Uploaded file").first.click(timeout=60_000)
        page.locator("input[type=file]").first.set_input_files(str(table), timeout=60_000)
        # the column pickers are drawn once the upload is stored; "Training pairs" alone is no sign of it:
        # the built-in task's figures stay on the page, greyed, until the click's rerun ends
        page.locator("[data-testid=stSidebar]").get_by_text("Source column").first.wait_for(timeout=60_000)
        page.get_by_text("Training pairs").first.wait_for(timeout=60_000)
        [saved] = [f for f in root.glob("server-*/*") if f.is_file()]
        page.close()
        deadline = time.monotonic() + 60
        while saved.exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        browser.close()
        assert not saved.exists()
