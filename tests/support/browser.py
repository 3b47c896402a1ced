"""Running the app for a real browser: ``streamlit run app.py`` on a free loopback port, and the
Chromium that Playwright drives (the browser tests and the browser benchmarks share these)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.paths import ROOT

CHROMIUM = Path("/usr/bin/chromium")
WAIT_MS = 60_000
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking"]

# the x tick labels of the first Plotly figure: the alignment heatmap of the Weights tab
TICKS_JS = """() => {
  const plot = document.querySelector('.js-plotly-plot');
  if (!plot) return null;
  return Array.from(plot.querySelectorAll('.xtick text')).map(t => t.textContent);
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(port: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                if r.read().decode().strip() == "ok":
                    return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"streamlit did not answer on port {port} within {timeout} s")


@contextmanager
def streamlit_app(env: dict[str, str] | None = None, log_path: Path | None = None) -> Iterator[tuple[str, float]]:
    """``streamlit run app.py`` on a free loopback port until the block ends: yields its URL and
    the ``perf_counter`` at which it was started (for start-to-first-heatmap timings)."""
    port = free_port()
    options = {
        "server.headless": "true",
        "server.address": "127.0.0.1",
        "server.port": str(port),
        "browser.gatherUsageStats": "false",
        "server.fileWatcherType": "none",
    }
    flags = [arg for name, value in options.items() for arg in (f"--{name}", value)]
    command = [sys.executable, "-m", "streamlit", "run", "app.py", *flags]
    log = log_path.open("w") if log_path else subprocess.DEVNULL
    started = time.perf_counter()
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_healthy(port, proc)
        yield f"http://127.0.0.1:{port}", started
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        if log_path:
            log.close()


# Text boxes of every Plotly figure: a problem is two boxes of different parts (title, legend,
# buttons, slider, annotations, axis titles, tick labels) that overlap, two tick labels of one
# axis that overlap, or a box outside its figure.
OVERLAPS_JS = """() => {
  const problems = [];
  const parts = {title: '.gtitle', legend: '.legend text', button: '.updatemenu-button text',
                 slider: '.slider-group text', note: '.annotation-text', xtitle: '.g-xtitle text',
                 ytitle: '.g-ytitle text', x: '.xtick text', y: '.ytick text', x2: '.x2tick text',
                 subtitle: '.gtitle-subtitle'};
  const hit = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  document.querySelectorAll('.js-plotly-plot').forEach((plot, k) => {
    const frame = plot.querySelector('.main-svg').getBoundingClientRect();
    const boxes = [];
    for (const [part, sel] of Object.entries(parts)) {
      plot.querySelectorAll(sel).forEach(el => {
        const r = el.getBoundingClientRect();
        if (r.width > 0 && r.height > 0 && (el.textContent || '').trim()) boxes.push({part, r, text: el.textContent});
      });
    }
    for (const b of boxes) {
      const out = b.r.left < frame.left - 2 || b.r.right > frame.right + 2;
      if (out || b.r.top < frame.top - 2 || b.r.bottom > frame.bottom + 2)
        problems.push(`figure ${k}: ${b.part} "${b.text}" is cut off`);
    }
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      const sameAxis = a.part === b.part && ['x', 'y', 'x2'].includes(a.part);
      if ((a.part !== b.part || sameAxis) && hit(a.r, b.r))
        problems.push(`figure ${k}: ${a.part} "${a.text}" overlaps ${b.part} "${b.text}"`);
    }
  });
  return problems;
}"""


# The controls of every Plotly figure against its texts and plots: the mode bar (Plotly draws it
# over the top right corner on hover), the legend, the play buttons (their boxes, not only their
# labels) and the slider's current value and rail; a problem is two of them that overlap, or one
# over a text (title, annotation, axis title, tick label) or a plot area.
CONTROLS_JS = """() => {
  const problems = [];
  const controls = {modebar: '.modebar-group', legend: '.legend .traces', button: '.updatemenu-button',
                    value: '.slider-current-value', rail: '.slider-rail-rect'};
  const others = {title: '.gtitle', note: '.annotation-text', xtitle: '.g-xtitle text', ytitle: '.g-ytitle text',
                  x: '.xtick text', y: '.ytick text', slider: '.slider-label', plot: '.nsewdrag'};
  const hit = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  document.querySelectorAll('.js-plotly-plot').forEach((plot, k) => {
    const boxes = (parts) => Object.entries(parts).flatMap(([part, sel]) => [...plot.querySelectorAll(sel)]
      .map(el => ({part, r: el.getBoundingClientRect(), text: (el.textContent || '').trim().slice(0, 40)}))
      .filter(b => b.r.width > 0 && b.r.height > 0));
    const mine = boxes(controls), theirs = boxes(others);
    mine.forEach((a, i) => [...mine.slice(i + 1), ...theirs].forEach(b => {
      if (a.part !== b.part && hit(a.r, b.r))
        problems.push(`figure ${k}: ${a.part} "${a.text}" overlaps ${b.part} "${b.text}"`);
    }));
  });
  return problems;
}"""


def control_problems(page, where: str) -> list[str]:
    """Every control of a figure (mode bar, legend, buttons, slider) over another or over a text or plot."""
    return [f"{where}: {p}" for p in page.evaluate(CONTROLS_JS)]


@contextmanager
def app_server(models: Path, tmp_path: Path, **env: str) -> Iterator[str]:
    """The app on ``models`` (``ATTNVIZ_MODELS``) with a HOME and a cache folder of its own under
    ``tmp_path``, one torch thread and ``env`` on top; skips the test where Chromium or Playwright is
    missing. The cache folder is the server's own: a shared one holds Explore's front-page record that
    an earlier test's server wrote on the same models, which a fresh server draws first (a map with no
    cell cursor) while torch loads."""
    import pytest

    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install it with `apt-get install -y chromium` (CI does)")
    pytest.importorskip("playwright.sync_api", reason="pip install playwright (never `playwright install`)")
    home = tmp_path / "home"
    home.mkdir()
    full = {
        **os.environ,
        "ATTNVIZ_MODELS": str(models),
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "OMP_NUM_THREADS": "1",
        **env,
    }
    with streamlit_app(full, tmp_path / "streamlit.log") as (url, _):
        yield url


def settle(page, ms: int = 2500) -> None:
    """Wait until Streamlit has finished the rerun, then for Plotly's last paint."""
    page.wait_for_function("() => !document.querySelector('[data-testid=stStatusWidget]')", timeout=WAIT_MS)
    page.wait_for_timeout(ms)


# A figure wider than its column (the page cuts it), bars narrower than a pixel (Plotly draws them
# with no width, so the values vanish), and a formula cut or scrolled in its box.
CUT_JS = """() => {
  const problems = [];
  const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  if (!main) return problems;
  const page = main.getBoundingClientRect();
  document.querySelectorAll('.js-plotly-plot').forEach((plot, k) => {
    const svg = plot.querySelector('.main-svg');
    if (!svg) return;
    const r = svg.getBoundingClientRect();
    const col = plot.closest('[data-testid="stColumn"]');
    const box = col ? col.getBoundingClientRect() : page;
    if (r.width > 0 && (r.right > box.right + 2 || r.left < box.left - 2))
      problems.push(`figure ${k} (${Math.round(r.width)} px) runs out of its column (${Math.round(box.width)} px)`);
    const lost = [...plot.querySelectorAll('.bars .point path')].filter(e => {
      const b = e.getBBox();
      return b.width === 0 && b.height > 0;
    }).length;
    if (lost) problems.push(`figure ${k}: ${lost} bars drawn with no width (narrower than a pixel)`);
  });
  document.querySelectorAll('.katex-display').forEach((el, k) => {
    if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 4)  // 4 px of slack
      problems.push(`formula ${k} is cut: ${el.scrollWidth} px in ${el.clientWidth} px`);
  });
  return problems;
}"""


def problems(page, where: str, looks: int = 3) -> list[str]:
    """Every text of a figure printed over another or cut off, figure cut by its column, bars drawn
    with no width, formula cut. What a first look finds is looked at again (up to ``looks`` times, 2 s
    apart) before it counts: on a loaded machine Plotly may still be fitting a figure to its column,
    while a real problem stays."""
    found = []
    for look in range(looks):
        found = page.evaluate(OVERLAPS_JS) + page.evaluate(CUT_JS)
        if not found or look == looks - 1:
            break
        page.wait_for_timeout(2000)
    return [f"{where}: {p}" for p in found]
