"""Where an Enter's time goes in the browser: Chromium's sampling profiler over N Enters in Explore.

Starts ``streamlit run app.py``, opens Explore on multi30k-de-en additive/Bahdanau (as
benchmarks/interaction.py does), presses Enter on N new 20-word sentences while the DevTools
protocol's CPU profiler samples the page's main thread every 100 µs, and prints the milliseconds
per Enter by where the time was spent: Plotly, React, CSS-in-JS (emotion and styled-components),
KaTeX (the math panel), Streamlit's markdown, the rest of Streamlit's frontend, native DOM and
layout calls, garbage collection, and the browser's own work. With ``--callers NAME`` it also
lists the JavaScript stacks that called a native function (``getBoundingClientRect``: a forced
layout) and how long each took.

    python benchmarks/enter_profile.py --enters 8
    python benchmarks/enter_profile.py --enters 8 --callers getBoundingClientRect --json
    python benchmarks/enter_profile.py --enters 8 --style both     # Both: the two styles side by side

Not a test: the figures depend on the machine and its load (printed with the run).
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

from benchmarks.interaction import SCORE, STYLE, TASK, TWENTY, enter, sentences, settle  # noqa: E402
from benchmarks.load_test import server_reruns  # noqa: E402
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, streamlit_app  # noqa: E402

# a script's file name (Streamlit's frontend ships hashed chunks: "PlotlyChart.D9Z0_fxz.js") -> its part
PARTS = (
    ("PlotlyChart", "Plotly"),
    ("react-dom", "React"),
    ("emotion", "CSS-in-JS"),
    ("styled-components", "CSS-in-JS"),
    ("katex", "KaTeX"),
    ("StreamlitMarkdown", "Streamlit markdown"),
)
BROWSER = {"(program)": "browser (parsing, style, paint)", "(garbage collector)": "garbage collection"}


def part(function: str, url: str) -> str | None:
    """The part of the page a profile sample's function belongs to; ``None`` for idle time."""
    if function == "(idle)":
        return None
    if function in BROWSER:
        return BROWSER[function]
    name = url.rsplit("/", 1)[-1]
    if not name:
        return "native DOM and layout calls"
    return next((label for prefix, label in PARTS if prefix in name), "the rest of Streamlit's frontend")


def summarise(profile: dict, enters: int, callers: str | None = None) -> dict:
    """Milliseconds per Enter by part, and (``callers``) the stacks that called that native function."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    parent = {child: n["id"] for n in profile["nodes"] for child in n.get("children", [])}
    parts: Counter = Counter()
    stacks: Counter = Counter()
    for sample, delta in zip(profile["samples"][1:], profile["timeDeltas"][1:], strict=True):
        frame = nodes[sample]["callFrame"]
        label = part(frame["functionName"], frame["url"])
        if label:
            parts[label] += delta / 1000
        if callers and frame["functionName"] == callers:
            stack, node = [], parent.get(sample)
            while node is not None and len(stack) < 5:
                f = nodes[node]["callFrame"]
                stack.append(f"{f['functionName'] or '(anonymous)'} ({f['url'].rsplit('/', 1)[-1] or 'native'})")
                node = parent.get(node)
            stacks[" < ".join(stack)] += delta / 1000
    per_enter = {k: round(v / enters, 1) for k, v in parts.most_common()}
    out = {"busy_ms_per_enter": round(sum(parts.values()) / enters, 1), "ms_per_enter": per_enter}
    if callers:
        out[f"{callers}_callers_ms_per_enter"] = {k: round(v / enters, 1) for k, v in stacks.most_common(6)}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--enters", type=int, default=8)
    parser.add_argument("--callers", help="also list the stacks that called this native function")
    parser.add_argument("--style", default=STYLE, choices=("bahdanau", "luong", "both"), help="decoder style")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "reruns.jsonl"
        env = {**os.environ, "HOME": tmp, "ATTNVIZ_RERUN_LOG": str(log)}
        with streamlit_app(env) as (url, _), sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            texts = sentences(TWENTY, args.enters + 3)
            query = f"task={TASK}&score={SCORE}&style={args.style}&text={texts[0]}"
            page.goto(f"{url}/?{query}", wait_until="domcontentloaded")
            page.locator(".js-plotly-plot .heatmaplayer").first.wait_for(timeout=120_000)
            settle(page, 2000)
            for text in texts[1:3]:  # warm: the first Enters compile the redraw's code
                enter(page, text)
                settle(page)
            cdp = page.context.new_cdp_session(page)
            cdp.send("Profiler.enable")
            cdp.send("Profiler.setSamplingInterval", {"interval": 100})
            since = time.time()
            cdp.send("Profiler.start")
            times = []
            for text in texts[3:]:
                times.append(enter(page, text))
                settle(page)
            profile = cdp.send("Profiler.stop")["profile"]
            served = server_reruns(log, since, time.time() + 0.5)
            browser.close()
    result = {
        "style": args.style,
        "enter_20_words_median_s": round(statistics.median(times), 3),
        "enters_s": [round(t, 3) for t in times],
        "server_median_s": round(statistics.median(served), 3) if served else None,
        **summarise(profile, len(times), args.callers),
        "load_average_1min": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
        "measured": time.strftime("%Y-%m-%d %H:%M"),
    }
    print(json.dumps(result, indent=1) if args.json else result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
