"""The training replay in Chromium at 1280x720 and 1920x1080: on Explore's Training view (one model
and Both) and on the Train page after a training whose probe is the sentence typed on Explore, no
text of the figure is printed over another or cut off, and its legend, mode bar, play buttons and
slider keep apart from each other and from the texts and plots."""

from __future__ import annotations

import pytest

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, WAIT_MS, app_server, control_problems, problems, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SIZES = [(1280, 720), (1920, 1080)]
TYPED = "the girl sees the cat ."
REPLAY = ".js-plotly-plot:has(.slider-group)"  # the animated figure


@pytest.fixture
def server(app_models_dir, tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    for path in app_models_dir.glob("*.safetensors"):  # the page's training saves beside them
        (models / path.name).write_bytes(path.read_bytes())
    with app_server(models, tmp_path, ATTNVIZ_PRETRAINED=str(tmp_path / "no-pretrained")) as url:
        yield url


def check_replay(page, where: str, shot) -> list[str]:
    """Hover the replay (Plotly shows its mode bar then), screenshot it, and list what overlaps."""
    figure = page.locator(REPLAY).first
    figure.scroll_into_view_if_needed()
    box = figure.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_timeout(500)
    figure.screenshot(path=str(shot))
    return problems(page, where) + control_problems(page, where)


def test_explores_training_view_keeps_everything_apart(server, tmp_path):
    from playwright.sync_api import sync_playwright

    found: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        for width, height in SIZES:
            for style in ("luong", "both"):
                page = browser.new_page(viewport={"width": width, "height": height})
                page.goto(
                    f"{server}/?task=toy-fr&score=general&style={style}&view=Training", wait_until="domcontentloaded"
                )
                page.locator(REPLAY).first.wait_for(timeout=WAIT_MS)
                settle(page)
                assert page.locator(f"{REPLAY} .heatmaplayer").count() == (2 if style == "both" else 1)
                where = f"{width}x{height} Explore {style}"
                found += check_replay(page, where, tmp_path / f"explore-{style}-{width}.png")
                page.close()
        browser.close()
    assert not found, "\n".join(found[:30])


def test_train_offers_explores_sentence_and_replays_the_training(server, tmp_path):
    from playwright.sync_api import sync_playwright

    found: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(
            f"{server}/?task=toy-fr&score=general&style=luong&text={TYPED.replace(' ', '+')}",
            wait_until="domcontentloaded",
        )
        page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=WAIT_MS)
        settle(page)
        page.get_by_role("link", name="Train").click()
        page.get_by_role("heading", name="Train a model").wait_for(timeout=WAIT_MS)
        settle(page)
        page.locator(".st-key-train_probe_pick").get_by_text(f"From Explore: {TYPED}").click()
        page.wait_for_function(
            f"() => document.querySelector('.st-key-train_probe input').value === '{TYPED}'", timeout=WAIT_MS
        )
        settle(page, 500)
        for key, value in (("train_n", "200"), ("train_epochs", "2"), ("train_name", "replayed")):
            field = page.locator(f".st-key-{key} input")
            field.fill(value)
            field.press("Enter")
            settle(page, 300)
        page.locator(".st-key-train_start button").click()
        page.get_by_text("Saved replayed", exact=False).wait_for(timeout=120_000)
        settle(page)
        probe_map = page.locator(".js-plotly-plot:has(.heatmaplayer)").last  # the probe after the last epoch
        assert probe_map.locator(".xtick text").all_text_contents() == [*TYPED.split(), "<eos>"]
        for width, height in SIZES:
            page.set_viewport_size({"width": width, "height": height})
            settle(page, 1500)
            found += check_replay(page, f"{width}x{height} Train", tmp_path / f"train-{width}.png")
        browser.close()
    assert not found, "\n".join(found[:30])
