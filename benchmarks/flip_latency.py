"""Explore's Bahdanau <-> Luong flip in Chromium: click on the style control -> the sibling's
heatmap drawn. Median of N flips on a running or freshly started server (not a test).

    python benchmarks/flip_latency.py --flips 10 --json
    python benchmarks/flip_latency.py --url http://127.0.0.1:8501 --task toy-fr --score general
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, streamlit_app  # noqa: E402

TITLE_JS = """() => { const t = document.querySelector('.js-plotly-plot .gtitle'); return t ? t.textContent : ''; }"""


def measure(url: str, task: str, score: str, flips: int, sentence: str) -> list[float]:
    from playwright.sync_api import sync_playwright

    times = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        text = sentence.replace(" ", "+")
        page.goto(f"{url}/?task={task}&score={score}&style=luong&text={text}", wait_until="domcontentloaded")
        page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=120_000)
        page.wait_for_timeout(1500)
        control = page.locator(".st-key-explore_style")
        for k in range(flips + 2):  # the first two load each model once (cached afterwards): not counted
            style = "bahdanau" if k % 2 == 0 else "luong"
            start = time.perf_counter()
            control.get_by_text(style.capitalize(), exact=True).click()
            page.wait_for_function(f"() => ({TITLE_JS})().includes('/ {style}')", timeout=60_000)
            if k >= 2:
                times.append(time.perf_counter() - start)
            page.wait_for_timeout(300)
        browser.close()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a running app (default: start one on a free port)")
    parser.add_argument("--task", default="toy-fr")
    parser.add_argument("--score", default="general")
    parser.add_argument("--sentence", default="the black cat does not eat the apple of the girl .")
    parser.add_argument("--flips", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.url:
        times = measure(args.url, args.task, args.score, args.flips, args.sentence)
    else:
        with streamlit_app() as (url, _):
            times = measure(url, args.task, args.score, args.flips, args.sentence)
    result = {
        "flips": len(times),
        "median_s": round(statistics.median(times), 3),
        "min_s": round(min(times), 3),
        "max_s": round(max(times), 3),
        "model": f"{args.task} {args.score}",
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(result, indent=1) if args.json else result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
