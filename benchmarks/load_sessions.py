"""The browser sessions of load_test.py: one Chromium, a training session on the Train page and
N translating sessions on Explore, each in its own browser context (its own Streamlit session).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

if __name__ == "__main__":  # a part of load_test.py, not a script of its own
    sys.exit("load_sessions.py is a part of load_test.py: run python benchmarks/load_test.py --help")

from benchmarks.load_app import DefaultModel

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking"]
WAIT_S = 60.0  # longest single wait in a page (first heatmap, one redraw, training start)
TRAIN_TASK, TRAIN_NAME, TRAIN_PROBE = "dates", "loadtest-dates", "saturday 22nd of november 2026"
VIEWPORT = {"width": 1400, "height": 1100}

SENTENCE_BOX = ".st-key-explore_text input"
PROGRESS = '[data-testid="stProgress"]'
APP_ERROR = '[data-testid="stException"]'
# the x tick labels of the first Plotly figure: the alignment heatmap of the Weights tab
TICKS_JS = """() => {
  const plot = document.querySelector('.js-plotly-plot');
  if (!plot) return null;
  return Array.from(plot.querySelectorAll('.xtick text')).map(t => t.textContent);
}"""
TICKS_MATCH_JS = f"expected => JSON.stringify(({TICKS_JS})()) === JSON.stringify(expected)"
BOX_FILLED_JS = f"() => {{ const el = document.querySelector('{SENTENCE_BOX}'); return el && el.value; }}"


@dataclass
class Deadline:
    """The end of the whole run; every wait is cut to what is left of it."""

    end: float

    def left(self) -> float:
        return max(0.0, self.end - time.monotonic())

    def wait_ms(self, longest: float = WAIT_S) -> float:
        """A Playwright timeout in ms: ``longest`` seconds or what is left, at least 1 ms."""
        return max(1.0, 1000 * min(longest, self.left()))


@dataclass
class SessionResult:
    """What one translating session saw."""

    index: int
    first_heatmap_s: float | None = None
    latencies_s: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    typing_from: float | None = None  # time.time() when it started typing


@dataclass
class TrainingResult:
    """What the training session saw."""

    started: bool = False
    status_at_start: str | None = None
    status_at_end: str | None = None
    failures: list[str] = field(default_factory=list)

    @property
    def running_at_end(self) -> bool:
        return bool(self.status_at_end and ": running" in self.status_at_end)


async def new_page(browser, url: str, deadline: Deadline):
    """A fresh browser context (its own cookies, so its own Streamlit session) with ``url`` open."""
    context = await browser.new_context(viewport=VIEWPORT)
    page = await context.new_page()
    await page.goto(url, wait_until="domcontentloaded", timeout=deadline.wait_ms())
    return context, page


async def wait_for_ticks(page, ticks: list[str], deadline: Deadline) -> None:
    """Wait until the first heatmap's x tick labels are exactly ``ticks``."""
    await page.wait_for_function(TICKS_MATCH_JS, arg=ticks, timeout=deadline.wait_ms())


async def first_heatmap(page, model: DefaultModel, deadline: Deadline) -> None:
    """Wait for the real Explore page: the sentence box filled, then the heatmap of its sentence.

    A fresh server first shows a placeholder chart while torch imports.
    """
    await page.wait_for_function(BOX_FILLED_JS, timeout=deadline.wait_ms())
    text = await page.locator(SENTENCE_BOX).input_value()
    await wait_for_ticks(page, model.ticks(text), deadline)


async def type_sentence(page, text: str, ticks: list[str], deadline: Deadline) -> float:
    """Type ``text``, press Enter, wait for the heatmap with ``ticks``; seconds from Enter to redrawn."""
    box = page.locator(SENTENCE_BOX)
    await box.fill(text, timeout=deadline.wait_ms())
    start = time.perf_counter()
    await box.press("Enter", timeout=deadline.wait_ms())
    await wait_for_ticks(page, ticks, deadline)
    return time.perf_counter() - start


async def translating_session(
    browser,
    url: str,
    model: DefaultModel,
    sentences: list[str],
    go: asyncio.Event,
    ready: asyncio.Barrier,
    deadline: Deadline,
    result: SessionResult,
) -> None:
    """Once ``go`` is set (the training runs), open Explore and wait for its heatmap; once every session
    is that far (``ready``), time each sentence's redraw."""
    from playwright.async_api import Error as PlaywrightError

    context = page = None
    try:
        await asyncio.wait_for(go.wait(), timeout=deadline.left())
        start = time.perf_counter()
        context, page = await new_page(browser, url, deadline)
        await first_heatmap(page, model, deadline)
        result.first_heatmap_s = time.perf_counter() - start
    except (PlaywrightError, TimeoutError) as e:
        result.failures.append(f"session {result.index}: no first heatmap: {type(e).__name__}: {first_line(e)}")
    try:
        await asyncio.wait_for(ready.wait(), timeout=deadline.left())  # all sessions type at the same time
        if result.first_heatmap_s is not None:
            result.typing_from = time.time()
            await type_sentences(page, model, sentences, deadline, result)
    except (PlaywrightError, TimeoutError, asyncio.BrokenBarrierError) as e:
        result.failures.append(f"session {result.index}: {type(e).__name__}: {first_line(e)}")
    finally:
        if context is not None:
            await context.close()


async def type_sentences(page, model: DefaultModel, sentences: list[str], deadline: Deadline, result: SessionResult):
    """Type each sentence in turn, recording its latency or its failure; then look for errors shown by the app."""
    from playwright.async_api import Error as PlaywrightError

    for text in sentences:
        try:
            result.latencies_s.append(await type_sentence(page, text, model.ticks(text), deadline))
        except PlaywrightError as e:
            result.failures.append(f"session {result.index}: no heatmap for {text!r}: {first_line(e)}")
    if shown := await page.locator(APP_ERROR).count():
        result.failures.append(f"session {result.index}: the app shows {shown} error(s)")


async def choose_train_task(page, task: str, deadline: Deadline) -> None:
    """Pick ``task`` in the Train page's sidebar; wait for the server's rerun (the task's caption)."""
    from attnviz.data import TASKS

    await page.locator(".st-key-train_task [role='combobox']").click(timeout=deadline.wait_ms())
    await page.get_by_role("option", name=task, exact=True).click(timeout=deadline.wait_ms())
    caption = re.match(r"[\w ]+", TASKS[task]).group().strip()  # the plain start: the caption is Markdown
    await page.get_by_text(caption).first.wait_for(timeout=deadline.wait_ms())


async def set_input(page, key: str, value: str, deadline: Deadline) -> None:
    """Type ``value`` into the keyed text or number input and commit it with Enter."""
    box = page.locator(f".st-key-{key} input")
    await box.fill(value, timeout=deadline.wait_ms())
    await box.press("Enter", timeout=deadline.wait_ms())


async def start_training(page, epochs: int, pairs: int, deadline: Deadline) -> str:
    """Fill the Train form for a small ``dates`` model, press Start; the progress text once it runs."""
    await choose_train_task(page, TRAIN_TASK, deadline)
    # the probe and the name keep the first task's defaults when the task changes: set both
    await set_input(page, "train_probe", TRAIN_PROBE, deadline)
    await set_input(page, "train_name", TRAIN_NAME, deadline)
    await set_input(page, "train_epochs", str(epochs), deadline)
    await set_input(page, "train_n", str(pairs), deadline)
    await page.locator(".st-key-train_start button").click(timeout=deadline.wait_ms())
    running = page.locator(PROGRESS).filter(has_text=re.compile(r": running"))
    await running.first.wait_for(timeout=deadline.wait_ms())
    return (await running.first.inner_text()).strip()


async def progress_text(page, deadline: Deadline) -> str | None:
    """The training's progress text now (the bar is redrawn every second while it runs)."""
    bar = page.locator(PROGRESS).first
    if not await bar.count():
        return None
    return (await bar.inner_text(timeout=deadline.wait_ms(5))).strip()


async def training_session(
    browser,
    url: str,
    args: argparse.Namespace,
    started: asyncio.Event,
    done: asyncio.Event,
    deadline: Deadline,
    result: TrainingResult,
) -> None:
    """Start a training on the Train page, set ``started``; when ``done`` is set, read its status."""
    from playwright.async_api import Error as PlaywrightError

    context = None
    try:
        # through the navigation: a cold server's first deep link to /train shows Streamlit's
        # "Page not found" dialog over the right page, and the dialog blocks the form's clicks
        context, page = await new_page(browser, url, deadline)
        await page.get_by_role("link", name="Train").click(timeout=deadline.wait_ms())
        result.status_at_start = await start_training(page, args.train_epochs, args.train_pairs, deadline)
        result.started = True
        started.set()
        await asyncio.wait_for(done.wait(), timeout=deadline.left())
        result.status_at_end = await progress_text(page, deadline)
        if shown := await page.locator(APP_ERROR).count():
            result.failures.append(f"training session: the app shows {shown} error(s)")
    except (PlaywrightError, TimeoutError) as e:
        result.failures.append(f"training session: {type(e).__name__}: {first_line(e)}")
    finally:
        started.set()  # never hold the translating sessions back
        if context is not None:
            await context.close()


def first_line(error: BaseException) -> str:
    """The first line of an error message (Playwright's are long)."""
    return (str(error).strip().splitlines() or [""])[0][:300]


def niced_chromium(folder: Path, nice: int, cpus: str | None = None) -> Path:
    """Chromium, or a wrapper that starts it at CPU priority ``nice`` and/or only on the cores
    ``cpus``: on a machine the browsers share with the server, their rendering then stays off the
    server's cores, as it would with the browsers on the users' own machines."""
    if nice <= 0 and not cpus:
        return CHROMIUM
    pin = f"taskset -c {cpus} " if cpus else ""
    wrapper = folder / "chromium-wrapped"
    wrapper.write_text(f'#!/bin/sh\nexec {pin}nice -n {nice} {CHROMIUM} "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    return wrapper


async def run_sessions(
    url: str, model: DefaultModel, plans: list[list[str]], args: argparse.Namespace, deadline: Deadline, home: Path
) -> tuple[list[SessionResult], TrainingResult, bool]:
    """One Chromium, one training session and ``len(plans)`` translating sessions; also whether time ran out."""
    from playwright.async_api import async_playwright

    results = [SessionResult(i) for i in range(len(plans))]
    training = TrainingResult()
    started, done = asyncio.Event(), asyncio.Event()
    ready = asyncio.Barrier(len(plans))
    async with async_playwright() as p:
        browser = await p.chromium.launch(
            executable_path=str(niced_chromium(home, args.browser_nice, args.browser_cpus)),
            headless=True,
            args=CHROMIUM_ARGS,
            env={**os.environ, "HOME": str(home)},
        )
        try:
            trainer = asyncio.create_task(training_session(browser, url, args, started, done, deadline, training))
            translators = [
                translating_session(browser, url, model, plan, started, ready, deadline, result)
                for plan, result in zip(plans, results, strict=True)
            ]
            timed_out = await gather_within(translators, deadline)
            done.set()
            timed_out |= await gather_within([trainer], deadline, grace=10)
        finally:
            await browser.close()
    return results, training, timed_out


async def gather_within(tasks: list, deadline: Deadline, grace: float = 0) -> bool:
    """Run ``tasks`` together until they end or the deadline (plus ``grace`` s) passes; True on timeout."""
    try:
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=deadline.left() + grace)
    except TimeoutError:
        return True
    return False
