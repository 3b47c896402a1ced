"""Explore's interaction budget in Chromium, server and browser on this machine.

For each interaction the median of N: seconds from the user's action to the redrawn heatmap (or
the clicked cell's numbers), the server's own time for those reruns (``ATTNVIZ_RERUN_LOG``, see
app.py), and the bytes the server sent over the websocket. With ``--trace DIR`` also a Chromium
performance trace per interaction kind, summarised by event (scripting, layout, paint).

    python benchmarks/interaction.py --json                 # starts its own server (cold start)
    python benchmarks/interaction.py --runs 10 --trace /tmp/traces
    python benchmarks/interaction.py --cold-only --cold-runs 10  # the cold start alone, median of 10

Not a test: figures depend on the machine's load (print it with every run). Measured runs are in
``benchmarks/results/interaction_results.json``; docs/speed.md reads them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.load_test import server_reruns  # noqa: E402
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, TICKS_JS, streamlit_app  # noqa: E402

TASK, SCORE, STYLE = "multi30k-de-en", "additive", "bahdanau"
SUBJECTS = [
    "Ein Mann",
    "Eine Frau",
    "Ein Junge",
    "Ein Mädchen",
    "Ein Arbeiter",
    "Ein Koch",
    "Ein Musiker",
    "Ein Radfahrer",
    "Ein Tourist",
    "Ein Polizist",
    "Eine Sängerin",
    "Ein Hund",
]
HEAD = "{} mit einem roten Hut sitzt auf einer Bank im Park und liest eine Zeitung über kleine Hunde"  # 19 words
TWENTY = HEAD + " ."
FORTY = HEAD + (
    " , während drei Kinder mit bunten Ballons über die grüne Wiese neben dem großen Brunnen laufen"
    " und dabei laut lachen ."
)


def sentences(template: str, n: int) -> list[str]:
    """``n`` different sentences of one length (each decode is new to the server's cache)."""
    out = [template.format(s) for s in SUBJECTS]
    return (out * (n // len(out) + 1))[:n]


def words(text: str) -> int:
    return len(text.split())


class Wire:
    """Bytes received over Streamlit's websocket since the last ``take()``."""

    def __init__(self, page) -> None:
        self.bytes = 0
        page.on("websocket", lambda ws: ws.on("framereceived", self._add))

    def _add(self, payload) -> None:
        self.bytes += len(payload)

    def take(self) -> int:
        n, self.bytes = self.bytes, 0
        return n


def ticks(page) -> list[str] | None:
    return page.evaluate(TICKS_JS)


def wait_new_ticks(page, old: list[str] | None) -> None:
    page.wait_for_function(
        f"old => {{ const t = ({TICKS_JS})(); return t && t.length && JSON.stringify(t) !== JSON.stringify(old); }}",
        arg=old,
        timeout=120_000,
    )


def settle(page, ms: int = 400) -> None:
    page.wait_for_timeout(ms)


def enter(page, text: str) -> float:
    box = page.locator(".st-key-explore_text input")
    box.fill(text)
    old = ticks(page)
    start = time.perf_counter()
    box.press("Enter")
    wait_new_ticks(page, old)
    return time.perf_counter() - start


CELL_JS = """() => { const el = document.querySelector('.st-key-explore_cell_s_weights input');
  return el ? el.value : null; }"""
# the cursor's readout (attnviz_app/app_pages/explore/cursor.js) lives in its component's shadow root
READOUT_JS = """() => { const find = root => root.querySelector('.attnviz-readout') || [...root.querySelectorAll('*')]
  .map(e => e.shadowRoot).filter(Boolean).map(find).find(Boolean);
  const host = document.querySelector('.st-key-explore_cursor_weights'); const el = host && find(host);
  return el ? el.textContent : ''; }"""


def click(page, col: int, until: str = "panel") -> float:
    """Click row 0's cell in column ``col``; seconds until its numbers show: in the browser's
    readout under the maps (``until="readout"``), or in the server's math panel (its cell boxes)."""
    plot = page.locator(".js-plotly-plot .nsewdrag").first.bounding_box()
    n_src = len(ticks(page) or [])
    n_tgt = len(page.locator(".js-plotly-plot").first.locator(".ytick text").all_text_contents())
    # the pointer rests on the cell first, as a user's does (Plotly picks the clicked point from
    # its hover, which it updates at most every 50 ms); the clock starts at the press
    page.mouse.move(plot["x"] + (col + 0.5) * plot["width"] / n_src, plot["y"] + 0.5 * plot["height"] / n_tgt)
    page.wait_for_timeout(100)
    start = time.perf_counter()
    page.mouse.down()
    page.mouse.up()
    if until == "readout":
        page.wait_for_function(f"col => ({READOUT_JS})().includes(`s=${{col}} “`)", arg=col, timeout=60_000)
    else:
        page.wait_for_function(f"col => ({CELL_JS})() === String(col)", arg=col, timeout=60_000)
    return time.perf_counter() - start


def summarise_trace(raw: bytes) -> dict[str, float]:
    """Milliseconds of the renderer main thread's top-level events by name (nested events are
    counted in their parent), and ``busy``: their sum, the browser's share of the interactions."""
    events = json.loads(raw)
    events = events.get("traceEvents", []) if isinstance(events, dict) else events
    threads = (e for e in events if e.get("name") == "thread_name")
    main = {e.get("tid") for e in threads if e["args"].get("name") == "CrRendererMain"}
    slices = (e for e in events if e.get("tid") in main and e.get("ph") == "X" and e.get("dur"))  # complete events
    spans = sorted((e["ts"], e.get("dur", 0), e["name"]) for e in slices)
    totals: Counter = Counter()
    end = float("-inf")
    for ts, dur, name in spans:
        if ts >= end:  # not inside the previous top-level event
            totals[name] += dur / 1000
            end = ts + dur
    top = {k: round(v, 1) for k, v in totals.most_common(6)}
    return {"busy": round(sum(totals.values()), 1), **top}


def measure(url: str, log: Path, runs: int, trace_dir: Path | None, browser_type) -> dict:
    browser = browser_type.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    wire = Wire(page)
    twenty, forty = sentences(TWENTY, runs + 1), sentences(FORTY, runs + 1)
    page.goto(f"{url}/?task={TASK}&score={SCORE}&style={STYLE}&text={twenty[0]}", wait_until="domcontentloaded")
    page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=120_000)
    settle(page, 1500)
    results = {}

    def run(kind: str, action, items) -> None:
        times, sent, served = [], [], []
        if trace_dir:
            browser.start_tracing(page=page, categories=["devtools.timeline", "v8.execute"])
        for item in items:
            wire.take()
            since = time.time()
            times.append(action(item))
            settle(page)
            sent.append(wire.take())
            served.append(sum(server_reruns(log, since, time.time() + 0.5)))
        entry = {
            "median_s": round(statistics.median(times), 3),
            "min_s": round(min(times), 3),
            "max_s": round(max(times), 3),
            "n": len(times),
            "server_median_s": round(statistics.median(served), 3) if any(served) else None,
            "kb_sent_median": round(statistics.median(sent) / 1024, 1),
        }
        if trace_dir:
            raw = browser.stop_tracing()
            (trace_dir / f"{kind}.json").write_bytes(raw)
            entry["browser_ms_total"] = summarise_trace(raw)
        results[kind] = entry

    run(f"enter_{words(twenty[1])}_words", lambda t: enter(page, t), twenty[1:])
    run(f"enter_{words(forty[1])}_words", lambda t: enter(page, t), forty[1:])
    cells = [(k % 5) + 1 if k % 2 else 6 for k in range(runs)]
    run("click_cell", lambda c: click(page, c), cells)  # to the math panel: the server's answer
    if page.evaluate(READOUT_JS):  # the browser-side readout, where the page has one
        run("click_cell_readout", lambda c: click(page, c, "readout"), [c + 1 for c in cells])
    page.goto(f"{url}/?task={TASK}&score={SCORE}&style={STYLE}&beam=10&text={forty[0]}", wait_until="domcontentloaded")
    page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=120_000)
    settle(page, 1500)
    longer = sentences(FORTY.replace("roten", "blauen"), runs)
    run(f"beam10_enter_{words(forty[1])}_words", lambda t: enter(page, t), longer)
    browser.close()
    return results


BOX = "input[aria-label^='Source sentence']"
FULL_PAGE = "[data-testid=stSidebar] [data-testid=stWidgetLabel]:has-text('Score function')"


def cold_starts(runs: int, env: dict, browser_type) -> list[dict[str, float]]:
    """``streamlit run`` to the app's front page, each on a fresh server and a fresh browser context;
    Chromium is already running, as a user's is. Per start: seconds to the first real heatmap with
    the sentence box ready (``heatmap``), and to the whole page with the sidebar's model choices
    (``full``). The servers share ``env``'s cache folder, as one user's do: the first start finds no
    record of the front page (explore/front.py), the later ones draw it while torch loads."""
    browser = browser_type.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
    starts = []
    for _ in range(runs):
        with streamlit_app(env) as (url, started):
            context = browser.new_context(viewport={"width": 1280, "height": 720})
            page = context.new_page()
            page.goto(f"{url}/", wait_until="domcontentloaded")
            page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=120_000)
            page.locator(BOX).wait_for(state="visible", timeout=60_000)
            heatmap = time.perf_counter() - started
            page.locator(FULL_PAGE).first.wait_for(timeout=120_000)
            starts.append({"heatmap": round(heatmap, 3), "full": round(time.perf_counter() - started, 3)})
            context.close()
    browser.close()
    return starts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--trace", type=Path, help="write Chromium performance traces here")
    parser.add_argument(
        "--cold-runs", type=int, default=1, help="cold starts to take the median of (after a first one)"
    )
    parser.add_argument("--cold-only", action="store_true", help="measure only the cold start")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    if args.trace:
        args.trace.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "reruns.jsonl"
        env = {**os.environ, "ATTNVIZ_RERUN_LOG": str(log), "HOME": tmp}
        with sync_playwright() as p:
            colds = cold_starts(args.cold_runs + 1, env | {"XDG_CACHE_HOME": str(Path(tmp) / "cache")}, p.chromium)
            first, later = colds[0], colds[1:]
            result = {
                "cold_start_to_first_heatmap_s": statistics.median(c["heatmap"] for c in later) if later else None,
                "cold_start_to_full_page_s": statistics.median(c["full"] for c in later) if later else None,
                "cold_start_runs": later,
                "first_start_without_record": first,
            }
            if not args.cold_only:
                with streamlit_app(env) as (url, _):
                    result.update(measure(url, log, args.runs, args.trace, p.chromium))
    result["load_average_1min"] = {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)}
    result["measured"] = time.strftime("%Y-%m-%d %H:%M")
    print(json.dumps(result, indent=1) if args.json else result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
