"""Select boxes whose labels follow the sentence, in Chromium (attnviz_app/app_pages/shared/choices.py):
after a new sentence, What-if's boxes show its tokens, and picking a step re-decodes instead of raising
(Streamlit sent back the old sentence's label as a string, and the page compared it with a number)."""

from __future__ import annotations

import pytest

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, WAIT_MS, app_server

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def server(app_models_dir, tmp_path):
    with app_server(app_models_dir, tmp_path, ATTNVIZ_PRETRAINED=str(tmp_path / "no-pretrained")) as url:
        yield url


def _idle(page) -> None:
    page.wait_for_timeout(500)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=WAIT_MS)
    page.wait_for_timeout(500)


def _pick(page, label: str, option_start: str) -> None:
    page.locator("[data-testid=stSelectbox]").filter(has_text=label).first.locator("input").click()
    page.get_by_role("option").filter(has_text=option_start).first.click()
    _idle(page)


def _shown(page, label: str) -> str:
    return page.locator("[data-testid=stSelectbox]").filter(has_text=label).first.locator("input").input_value()


def test_what_if_after_a_new_sentence_shows_its_tokens_and_decodes(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        query = "task=toy-fr&score=additive&style=bahdanau&text=the+cat+sees+the+dog+.&view=What-if"
        page.goto(f"{server}/?{query}", wait_until="domcontentloaded")
        page.get_by_text("Attend only to").first.wait_for(timeout=WAIT_MS)
        _idle(page)
        _pick(page, "Attend only to", "1: cat")
        box = page.locator(".st-key-explore_text input")
        box.fill("the girl eats an apple .")
        box.press("Enter")
        page.wait_for_url("**text=the+girl**", timeout=WAIT_MS)
        _idle(page)
        assert "1: girl" in _shown(page, "Attend only to")  # this sentence's token, not the last one's
        _pick(page, "Decoder step", "1:")
        assert page.locator("[data-testid=stException]").count() == 0
        assert "1: girl" in _shown(page, "Attend only to")
        assert page.locator("[data-testid=stDataFrame]").count() >= 1  # the re-decoded step table
        browser.close()
