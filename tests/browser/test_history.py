"""Explore's history in Chromium: one browser history entry per action, Back and Forward restore
each state on the page, a copied link opens the same state in a fresh browser (checkpoint and
display toggles included), a bad link opens the defaults with a one-line note."""

from __future__ import annotations

import contextlib
import re
import shutil

import pytest

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, WAIT_MS, app_server

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TEXT = "the girl sees the cat ."
TWIN = "toyfr-general-bahdanau-twin"  # a second checkpoint of the general/Bahdanau slot

# what the page shows, read from the DOM: the sentence, the style, the open view, the maps' titles,
# the Bahdanau checkpoint box and the sidebar's model names, the <eos> toggle
SNAPSHOT_JS = """() => {
  const q = (sel) => document.querySelector(sel);
  const texts = (sel) => Array.from(document.querySelectorAll(sel)).map(e => e.textContent.trim());
  const box = q('.st-key-explore_checkpoint_bahdanau');
  return {
    text: (q('.st-key-explore_text input') || {}).value,
    style: texts('.st-key-explore_style [role=radio][aria-checked=true]').join(),
    view: texts('[role=tab][aria-selected=true]').join(),
    titles: texts('.js-plotly-plot .gtitle').filter(t => t.includes(' / '))
      .map(t => t.split(' · ').slice(0, 2).join(' · ')),
    checkpoint: box ? (box.querySelector('input') || {value: ''}).value.split(' · ')[0] : null,
    sidebar: texts('[data-testid=stSidebar] [data-testid=stCaptionContainer]').filter(t => t.includes('odel: ')),
    eos: !!(q('.st-key-explore_eos input') || {}).checked,
  };
}"""

# every history.pushState of the page, counted (a new entry; Streamlit's own writes included)
COUNT_PUSHES_JS = """
window.__pushes = 0;
const push = history.pushState.bind(history);
history.pushState = (...args) => { window.__pushes += 1; return push(...args); };
"""


# every script run of the page that ended (stApp's data-test-script-state back to notRunning), counted in the
# browser: a click's rerun starts only once the server has read the click, which a busy server does late,
# while the box or radio the test acted on already shows the new value
COUNT_RUNS_JS = """
window.__runs = 0;
new MutationObserver(changes => changes.forEach(c => {
  if (c.oldValue !== 'notRunning' && c.target.dataset.testScriptState === 'notRunning') window.__runs += 1;
})).observe(document, {subtree: true, attributes: true, attributeOldValue: true,
                       attributeFilter: ['data-test-script-state']});
"""


@pytest.fixture
def server(app_models_dir, tmp_path):
    models = tmp_path / "models"
    shutil.copytree(app_models_dir, models)
    shutil.copyfile(models / "toyfr-general-bahdanau.safetensors", models / f"{TWIN}.safetensors")
    with app_server(models, tmp_path, ATTNVIZ_PRETRAINED=str(tmp_path / "no-pretrained")) as url:
        yield url


def settle(page) -> dict:
    """Wait for Streamlit's rerun to end and the maps to be drawn; what the page shows."""
    page.wait_for_timeout(400)  # a click's rerun starts after a short trip to the server
    page.wait_for_function(
        "() => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'",
        timeout=WAIT_MS,
    )
    page.wait_for_timeout(600)
    return page.evaluate(SNAPSHOT_JS)


def shown(state: dict) -> dict:
    """A state as compared across window sizes: a wide map's title breaks its line where a narrow
    one writes " · "."""
    return {**state, "titles": [t.replace(" · ", "") for t in state["titles"]]}


def act(page, action, expect: dict) -> dict:
    """Do ``action``; the state it leads to (which must show ``expect``) and one new history entry."""
    from playwright.sync_api import TimeoutError as Timeout

    before, runs = page.evaluate("[window.__pushes, window.__runs]")
    action()
    try:  # a rerun that started after the action has ended, and the page shows what it should
        page.wait_for_function(
            f"""([want, runs]) => {{ const s = ({SNAPSHOT_JS})();
              return window.__runs > runs && Object.entries(want).every(([k, v]) => s[k] === v); }}""",
            arg=[expect, runs],
            timeout=WAIT_MS,
        )
    except Timeout:
        pytest.fail(f"the page never showed {expect}: {page.evaluate(SNAPSHOT_JS)}")
    state = settle(page)
    assert page.evaluate("window.__pushes") == before + 1, f"one history entry for {expect}"
    return state


def go(page, move, expected: dict, where: str) -> None:
    """Back or Forward: the page shows ``expected`` again, and adds no history entry."""
    from playwright.sync_api import TimeoutError as Timeout

    before, runs = page.evaluate("[window.__pushes, window.__runs]")
    move()
    try:
        page.wait_for_function(
            f"([want, runs]) => window.__runs > runs && JSON.stringify(({SNAPSHOT_JS})()) === JSON.stringify(want)",
            arg=[expected, runs],
            timeout=WAIT_MS,
        )
    except Timeout:
        pytest.fail(f"{where}: the page shows {page.evaluate(SNAPSHOT_JS)}, not {expected}")
    assert settle(page) == expected, where
    assert page.evaluate("window.__pushes") == before, f"{where} adds no entry"


def test_back_forward_and_links_restore_every_state(server, tmp_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.add_init_script(COUNT_PUSHES_JS)
        page.add_init_script(COUNT_RUNS_JS)
        page.goto(f"{server}/", wait_until="domcontentloaded")
        page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=WAIT_MS)
        start = settle(page)
        style = page.locator(".st-key-explore_style")
        box = page.locator(".st-key-explore_text input")

        def type_text() -> None:
            box.fill(TEXT)
            box.press("Enter")

        typed = act(page, type_text, {"text": TEXT})
        assert typed["style"] == "Luong" and typed["titles"] == ["toyfr-general-luong · general / Luong"]
        both = act(page, lambda: style.get_by_text("Both", exact=True).click(), {"style": "Both"})
        assert len(both["titles"]) == 2
        per_step = act(page, lambda: page.get_by_role("tab", name="Per step").click(), {"view": "Per step"})
        luong = act(page, lambda: style.get_by_text("Luong", exact=True).click(), {"style": "Luong"})
        assert luong["text"] == TEXT and luong["view"] == "Per step"  # a style change keeps the view
        page.screenshot(path=str(tmp_path / "history-1280.png"))

        go(page, page.go_back, per_step, "Back to Both, Per step")
        go(page, page.go_back, both, "Back to Both, Weights")
        go(page, page.go_back, typed, "Back to the typed sentence")
        go(page, page.go_forward, both, "Forward to Both")
        assert start["text"] != TEXT

        # a checkpoint and a display toggle are actions too, and part of the link
        other = next(n for n in (TWIN, "toyfr-general-bahdanau") if n != both["checkpoint"])  # the slot's other one
        picked = act(page, lambda: pick_checkpoint(page, other), {"checkpoint": other})
        assert f"{other} · general / Bahdanau" in picked["titles"]
        hidden = act(page, lambda: page.locator(".st-key-explore_eos label").click(), {"eos": True})
        assert all("<eos> hidden" in t for t in page.locator(".js-plotly-plot .gtitle").all_text_contents()[:2])
        assert picked["sidebar"][0].startswith(f"Bahdanau model: {other} (")  # the sidebar names the one picked
        link = page.url
        go(page, page.go_back, picked, "Back turns the toggle off")

        fresh = browser.new_context(viewport={"width": 1920, "height": 1080})
        second = fresh.new_page()
        second.goto(link, wait_until="domcontentloaded")
        second.locator(".js-plotly-plot .heatmaplayer").nth(1).wait_for(timeout=WAIT_MS)
        assert shown(settle(second)) == shown(hidden), "a copied link opens the same state"
        second.screenshot(path=str(tmp_path / "link-1920.png"))

        bad = fresh.new_page()
        bad.add_init_script(COUNT_PUSHES_JS)
        second.close()
        second = bad
        second.goto(f"{server}/?task=klingon&view=Nope&cell=x&colour=red", wait_until="domcontentloaded")
        second.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=WAIT_MS)
        opened = settle(second)
        assert second.evaluate("window.__pushes") == 0, "a bad link is one history entry, not two"
        assert {k: opened[k] for k in ("style", "view", "titles")} == {k: start[k] for k in ("style", "view", "titles")}
        notes = second.locator("[data-testid=stAlert] [data-testid=stMarkdownContainer]", has_text="not known here")
        notes = notes.all_inner_texts()
        assert len(notes) == 1 and "klingon" in notes[0] and "Nope" in notes[0] and "colour" in notes[0]
        assert len(notes[0].strip().splitlines()) == 1, "one line"
        second.screenshot(path=str(tmp_path / "bad-link-1280.png"))
        assert page.locator("text=Traceback").count() == 0 and second.locator("text=Traceback").count() == 0
        browser.close()


def pick_checkpoint(page, name: str) -> None:
    """Open the Bahdanau checkpoint box (scrolled up from the window's bottom edge) and pick ``name``."""
    box = page.locator(".st-key-explore_checkpoint_bahdanau")
    box.evaluate("e => e.scrollIntoView({block: 'center'})")
    box.locator("button[aria-label=Open]").click()
    # the box names a checkpoint without its task (the test models' names do not begin with it)
    page.locator("[role=option]").filter(has_text=re.compile(f"^{re.escape(name)}$")).click()


def test_a_link_survives_a_visit_to_another_page(server):
    # opened from a link, left by the sidebar and come back: the URL holds what is shown, Back goes
    # straight to the page left by the sidebar (no second entry for the same state), and Forward
    # shows the state again
    from playwright.sync_api import sync_playwright

    link = f"{server}/?task=toy-fr&score=general&style=both&text={TEXT.replace(' ', '+')}"
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.goto(link, wait_until="domcontentloaded")
        page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=WAIT_MS)
        typed_box = "t => document.querySelector('.st-key-explore_text input')?.value === t"
        with contextlib.suppress(PlaywrightTimeout):  # the box may come after the first map on a loaded machine
            page.wait_for_function(typed_box, arg=TEXT, timeout=WAIT_MS)
        opened = settle(page)
        assert opened["text"] == TEXT and opened["style"] == "Both"
        entries = page.evaluate("history.length")
        page.locator("[data-testid=stSidebarNav] a", has_text="Compare").first.click()
        page.wait_for_url(re.compile(r"/compare"), timeout=WAIT_MS)
        page.locator("[data-testid=stSidebarNav] a", has_text="Explore").first.click()
        page.wait_for_url(re.compile(r"\?.*task=toy-fr"), timeout=WAIT_MS)
        page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=WAIT_MS)
        assert settle(page) == opened and "style=both" in page.url
        assert page.evaluate("history.length") == entries + 2, "the sidebar's visit is one entry each way"
        page.go_back()  # at once to Compare: the sidebar's entry for Explore holds the state it shows
        page.wait_for_url(re.compile(r"/compare"), timeout=WAIT_MS)
        page.go_forward()
        page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=WAIT_MS)
        assert settle(page) == opened and "style=both" in page.url
        # a bare first visit's entry still stands for the defaults: Back from the first action shows them
        bare = browser.new_page(viewport={"width": 1280, "height": 720})
        bare.goto(f"{server}/", wait_until="domcontentloaded")
        bare.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=WAIT_MS)
        start = settle(bare)
        bare.locator(".st-key-explore_text input").fill(TEXT)
        bare.locator(".st-key-explore_text input").press("Enter")
        bare.wait_for_url(re.compile(r"text="), timeout=WAIT_MS)
        settle(bare)
        bare.go_back()
        bare.wait_for_function(typed_box, arg=start["text"], timeout=WAIT_MS)
        assert settle(bare)["text"] == start["text"] != TEXT
        browser.close()


def test_explore_by_its_name_is_explore_and_back_leaves_it(server):
    # /explore, as /compare and /train suggest, shows the same state as / with the same query, with
    # no "Page not found" and no redirect that would hold Back on the page
    from playwright.sync_api import sync_playwright

    query = f"?task=toy-fr&score=general&style=both&text={TEXT.replace(' ', '+')}"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        states = {}
        for path in ("/", "/learn", "/explore"):
            page.goto(f"{server}{path}{query if path != '/learn' else ''}", wait_until="domcontentloaded")
            if path == "/learn":
                page.get_by_role("heading", name="How attention works").first.wait_for(timeout=WAIT_MS)
                continue
            page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=WAIT_MS)
            typed = "t => document.querySelector('.st-key-explore_text input')?.value === t"
            page.wait_for_function(typed, arg=TEXT, timeout=WAIT_MS)
            states[path] = settle(page)
            assert page.get_by_text("Page not found").count() == 0, path
        assert states["/explore"] == states["/"] and states["/"]["text"] == TEXT and states["/"]["style"] == "Both"
        assert "/explore?" in page.url
        page.go_back()
        page.wait_for_url(re.compile(r"/learn$"), timeout=WAIT_MS)
        browser.close()
