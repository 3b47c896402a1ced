"""Running the app for a real browser: ``streamlit run app.py`` on a free loopback port, and the
Chromium that Playwright drives (the browser tests and the browser benchmarks share these)."""

from __future__ import annotations

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
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
               "--server.address", "127.0.0.1", "--server.port", str(port),
               "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]  # fmt: skip
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
