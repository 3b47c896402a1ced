"""Every page in Chromium at two window sizes: the Bahdanau | Luong | Both journey, and no text of
a figure printed over another or cut off (checked in the DOM, on the SVG text boxes)."""

from __future__ import annotations

import re

import pytest

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, WAIT_MS, app_server, problems, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHORT = "the cat eats ."  # 5 tokens with <eos>
LONG = " ".join(["the black cat eats the apple ."] * 6)[:-2] + " ."  # about 40 tokens
MEDIUM = " ".join(["the black cat eats the apple ."] * 3)  # 22 tokens with <eos>
SIZES = [(1280, 720), (1920, 1080)]
TITLES = {"Compare": "Compare attention", "Data": "Data", "Evaluate": "Evaluate", "Learn": "How attention works"}


def open_page(page, name: str, title: str) -> None:
    """Click a navigation link and wait for the page's title; once more if a busy machine let
    the click land while the previous page was still running."""
    for attempt in range(2):
        page.get_by_role("link", name=name).click()
        try:
            page.get_by_role("heading", name=title).wait_for(timeout=WAIT_MS // 2 if attempt == 0 else WAIT_MS)
            return
        except Exception:  # playwright's TimeoutError; the second try raises
            if attempt:
                raise


@pytest.fixture
def server(app_models_dir, tmp_path):
    with app_server(app_models_dir, tmp_path) as url:
        yield url


def test_toggle_journey_and_no_overlaps_on_any_page(server, tmp_path):
    from playwright.sync_api import sync_playwright

    found: list[str] = []
    elsewhere: list[str] = []  # requests to any other host than the app's: the app works offline

    def outside(request) -> None:
        if not request.url.startswith((server, "data:", "blob:", "about:")):
            elsewhere.append(request.url)

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        for width, height in SIZES:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.on("request", outside)
            size = f"{width}x{height}"
            page.goto(
                f"{server}/?task=toy-fr&score=general&style=luong&text={SHORT.replace(' ', '+')}",
                wait_until="domcontentloaded",
            )
            page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=WAIT_MS)
            settle(page)
            heading = page.get_by_role("heading", level=1)  # for screen readers; drawn nowhere
            assert heading.count() == 1 and heading.text_content() == "Explore attention"
            heat = page.locator(".js-plotly-plot").first.bounding_box()
            if width == 1280:
                assert heat["y"] < height, "the heatmap starts above the fold at 1280x720"
            found += problems(page, f"{size} Explore Luong")
            # flip the style: one click, same sentence, the sibling's map
            page.locator(".st-key-explore_style").get_by_text("Bahdanau", exact=True).click()
            page.locator(".js-plotly-plot .gtitle", has_text="general / Bahdanau").first.wait_for(timeout=WAIT_MS)
            assert page.locator(".st-key-explore_text input").input_value() == SHORT
            page.locator(".st-key-explore_style").get_by_text("Both", exact=True).click()
            page.locator(".js-plotly-plot .gtitle", has_text="general / Luong").first.wait_for(timeout=WAIT_MS)
            settle(page)
            assert page.locator(".js-plotly-plot .heatmaplayer").count() >= 2
            found += problems(page, f"{size} Explore Both weights")
            for view in ("Per step", "Context vectors", "Difference"):
                page.get_by_role("tab", name=view).click()
                settle(page)
                found += problems(page, f"{size} Explore Both {view}")
                if view == "Per step" and page.locator(".st-key-explore_step [role=slider]").count():
                    page.locator(".st-key-explore_step [role=slider]").press("ArrowRight")
                    settle(page)
                    assert (
                        page.locator(".js-plotly-plot .gtitle", has_text="Step 1").count() >= 2
                    )  # one slider, both panels
            page.screenshot(path=str(tmp_path / f"explore-{size}.png"))
            for name, title in TITLES.items():
                open_page(page, name, title)
                settle(page, 3500)
                found += problems(page, f"{size} {name}")
            page.get_by_role("link", name="Explore").click()
            page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=WAIT_MS)
            assert page.locator(".st-key-explore_text input").input_value() == SHORT  # state survived
            page.close()
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.on("request", outside)
        page.goto(
            f"{server}/?task=toy-fr&score=general&style=luong&text={LONG.replace(' ', '+')}",
            wait_until="domcontentloaded",
        )
        page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=WAIT_MS)
        settle(page)
        found += problems(page, "1280x720 Explore 40 tokens")
        assert page.locator("text=Traceback").count() == 0
        page.goto(  # Both on a 22-token sentence: two maps in columns of 394 px, labels upright and apart
            f"{server}/?task=toy-fr&score=general&style=both&text={MEDIUM.replace(' ', '+')}",
            wait_until="domcontentloaded",
        )
        page.locator(".js-plotly-plot .heatmaplayer").nth(1).wait_for(timeout=WAIT_MS)
        settle(page)
        found += problems(page, "1280x720 Explore Both 22 tokens")
        browser.close()
    assert not found, "\n".join(found[:30])
    assert not elsewhere, f"the browser fetched from another host: {elsewhere[:5]}"


def test_markdown_typed_by_a_user_fetches_nothing(server):
    """Text typed into the app is never rendered as Markdown: an image link in a sentence, a
    Learn vector or a Compare reference makes the browser request nothing (no tracking beacon)."""
    from playwright.sync_api import sync_playwright

    beacon = "/beacon-c.png"
    payload = f"![t]({server}{beacon}) **md** $x^2$"
    requested: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("request", lambda r: requested.append(r.url))
        page.goto(f"{server}/?task=toy-fr&score=general&style=luong", wait_until="domcontentloaded")
        page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=WAIT_MS)
        box = page.locator(".st-key-explore_text input")
        box.fill(payload)
        box.press("Enter")
        page.get_by_text("Unknown to this model", exact=False).first.wait_for(timeout=WAIT_MS)
        settle(page)
        assert page.locator("main strong", has_text="md").count() == 0  # no bold from the user's text
        open_page(page, "Compare", "Compare attention")  # opens on Explore's sentence: the payload
        settle(page)
        page.get_by_text("a reference", exact=True).click()
        reference = page.locator(".st-key-cmp_reference input")
        reference.wait_for(timeout=WAIT_MS)
        reference.fill(payload)
        reference.press("Enter")
        page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=WAIT_MS)
        settle(page)
        assert page.locator("main strong", has_text="md").count() == 0
        open_page(page, "Learn", "How attention works")
        query = page.locator(".st-key-learn_query input")
        query.fill(payload)
        query.press("Enter")
        page.locator("[data-testid=stAlert]").first.wait_for(timeout=WAIT_MS)  # the parse error
        settle(page)
        browser.close()
    assert not [u for u in requested if beacon in u], "an image typed by the user was fetched"


# How far each map's outline is from its cell, in pixels of the page (the largest of the four
# edges): the cell's corners come from the map's own axes (so after a zoom too), clipped to the
# plot area; null where a map shows no outline.
OUTLINE_JS = """([t, s]) => [...document.querySelectorAll('.js-plotly-plot')]
  .filter(gd => gd.querySelector('.heatmaplayer'))
  .map(gd => {
    const box = gd.querySelector('.attnviz-cell');
    if (!box || box.style.display === 'none') return null;
    const r = box.getBoundingClientRect(), host = gd.querySelector('.svg-container').getBoundingClientRect();
    const edges = (ax, v, origin) => [ax.l2p(v - 0.5), ax.l2p(v + 0.5)].sort((a, b) => a - b)
      .map(p => origin + Math.min(Math.max(ax._offset + p, ax._offset), ax._offset + ax._length));
    const [x0, x1] = edges(gd._fullLayout.xaxis, s, host.left), [y0, y1] = edges(gd._fullLayout.yaxis, t, host.top);
    return Math.max(Math.abs(r.left - x0), Math.abs(r.right - x1), Math.abs(r.top - y0), Math.abs(r.bottom - y1));
  })"""


def test_a_click_outlines_its_cell_on_both_maps_at_once(server):
    """Both: a click on the right map outlines that cell on both maps and writes its numbers in the
    browser, before the server's answer (the cell boxes) arrives; the outline follows a zoom and
    the cell boxes."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        url = f"{server}/?task=toy-fr&score=general&style=both&text={SHORT.replace(' ', '+')}"
        page.goto(url, wait_until="domcontentloaded")
        page.locator(".js-plotly-plot .heatmaplayer").nth(1).wait_for(timeout=WAIT_MS)
        settle(page)
        maps = page.locator(".js-plotly-plot .nsewdrag")
        right = maps.nth(1).bounding_box()
        n_tgt = len(page.locator(".js-plotly-plot").nth(1).locator(".ytick text").all_text_contents())
        n_src = len(page.locator(".js-plotly-plot").nth(1).locator(".xtick text").all_text_contents())
        t, s = n_tgt - 1, 2
        box_s = page.locator(".st-key-explore_cell_s_weights input")
        assert box_s.input_value() != str(s)
        page.mouse.click(
            right["x"] + (s + 0.5) * right["width"] / n_src, right["y"] + (t + 0.5) * right["height"] / n_tgt
        )
        page.locator(".attnviz-readout", has_text=f"s={s} “").wait_for(timeout=2000)
        box_s_reads_s = f"() => document.querySelector('.st-key-explore_cell_s_weights input').value === '{s}'"
        page.wait_for_function(box_s_reads_s, timeout=WAIT_MS)
        settle(page, 800)
        outlines = page.evaluate(OUTLINE_JS, [t, s])
        rows = [len(page.locator(".js-plotly-plot").nth(k).locator(".ytick text").all_text_contents()) for k in (0, 1)]
        readout = page.locator(".attnviz-readout").text_content()
        assert "Bahdanau: " in readout and "Luong: " in readout and "weight " in readout
        for rows_k, outline in zip(rows, outlines, strict=True):  # a map without row t shows no outline
            assert (outline is None) == (t >= rows_k), (rows, outlines)
            assert outline is None or outline < 2, outlines
        if rows[0] <= t:
            assert f"Bahdanau: no step t={t}" in readout
        # the readout's numbers are the map's own, written as its hover writes them (cursor.js reads z/customdata)
        near = (right["x"] + (s + 0.4) * right["width"] / n_src, right["y"] + (t + 0.4) * right["height"] / n_tgt)
        page.mouse.move(*near)
        hover = page.locator(".js-plotly-plot").nth(1).locator(".hoverlayer .hovertext")
        hover.first.wait_for(timeout=WAIT_MS)
        numbers = re.search(r"weight: (\S+?)\s*score: (\S+)", hover.first.text_content())
        assert numbers and f"Luong: t={t} " in readout, (hover.first.text_content(), readout)
        assert f"weight {numbers[1]}, score {numbers[2]}" in readout.split("Luong: ")[1], (numbers.groups(), readout)
        # a zoom (the toolbar's +; the wheel scrolls the page) moves the cells: the outline goes with its cell
        page.mouse.move(right["x"] + right["width"] / 3, right["y"] + right["height"] / 2)
        page.locator(".js-plotly-plot").nth(1).locator('.modebar-btn[data-title="Zoom in"]').click()
        settle(page, 800)
        zoomed = page.evaluate("() => document.querySelectorAll('.js-plotly-plot')[1]._fullLayout.xaxis.range")
        assert zoomed != [-0.5, n_src - 0.5], "the toolbar's + zoomed in"
        outline = page.evaluate(OUTLINE_JS, [t, s])[1]
        assert outline is None or outline < 2, outline
        # the number boxes move the cell too (the server draws it there on its answer)
        box_s.fill("0")
        box_s.press("Enter")
        page.locator(".attnviz-readout", has_text="s=0 “").wait_for(timeout=WAIT_MS)
        readout = page.locator(".attnviz-readout", has_text="s=0 “").first.text_content()
        assert "s=0 “\u2068" in readout and "\u2069”, weight" in readout  # each word isolated (RTL words)
        settle(page, 800)
        moved = page.evaluate(OUTLINE_JS, [t, 0])
        assert all(o is None or o < 2 for o in moved), (moved, page.evaluate(OUTLINE_JS, [t, s]))
        browser.close()


def test_a_first_visit_to_a_page_url_opens_it_inside_the_app(server):
    """A fresh server's first visitor following a link to /evaluate (or reloading it after a
    restart) gets the page inside the app, with its navigation: no folder named pages/ lies beside
    the entry file, which Streamlit would route on its own (each page without app.py's frame, and no
    Train page in its list) until a session first called st.navigation."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(f"{server}/evaluate")
        page.get_by_role("heading", name="Evaluate").wait_for(timeout=WAIT_MS)
        settle(page, 500)
        links = page.locator("[data-testid=stSidebarNav] a").all_text_contents()
        app_pages = ["Explore", "Compare", "Train", "Your model", "Data", "Evaluate", "Learn"]
        assert len(links) == len(app_pages), links
        assert all(name in link for name, link in zip(app_pages, links, strict=True)), links
        page.goto(f"{server}/train")
        page.get_by_role("heading", name="Train a model").wait_for(timeout=WAIT_MS)
        browser.close()


LABEL_SEEN = """() => {
    const label = document.querySelector('.st-key-explore_text label');
    const box = label.getBoundingClientRect();
    return label.contains(document.elementFromPoint(box.left + 20, box.top + box.height / 2));
}"""


def test_the_sentence_label_is_below_the_header_with_the_sidebar_closed_and_on_a_phone(server):
    """Streamlit's header turns opaque with the sidebar closed and on a phone: the sentence box's label
    (the page's one hint that Enter translates) must start below it, and stay compact with it open."""
    from playwright.sync_api import sync_playwright

    phone = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 3}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        for options in ({"viewport": {"width": 1366, "height": 768}}, phone):
            page = browser.new_context(**options).new_page()
            page.goto(f"{server}/?task=toy-fr&score=general&style=luong&text=the+cat+eats+.", wait_until="load")
            page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=WAIT_MS)
            settle(page)
            assert page.evaluate(LABEL_SEEN), f"{options['viewport']}: the label is under the header"
            if options is not phone:
                assert page.locator(".st-key-explore_text").bounding_box()["y"] < 40  # compact with the sidebar open
                page.locator('[data-testid="stSidebar"]').hover()
                page.locator('[data-testid="stSidebarCollapseButton"] button').first.click()
                page.wait_for_function("document.querySelector('[data-testid=stSidebar]').dataset.collapsed === 'true'")
                settle(page)
                assert page.evaluate(LABEL_SEEN), "sidebar closed: the label is under the header"
        browser.close()
