"""The figure for a paper as PNG, SVG and PDF: what a user waits for when pressing the buttons one
after the other and then PNG again (after a rerun), drawn as the app drew them before (one kaleido
Chromium started for each file, ``fig.to_image``) and as it draws them now
(``attnviz.plots.figure_images``: the first ask draws all three in one Chromium, the files are
kept for the same figure). A figure of three maps of a 12-word sentence, as Compare's grid makes
it; a drawing first, not counted, so that both ways start with warm disk caches. Not a test.

    OMP_NUM_THREADS=1 python benchmarks/paper_export.py --rounds 5 --out benchmarks/results/paper_export.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from attnviz.plots import IMAGE_FORMATS, figure_images, paper_figure  # noqa: E402
from attnviz.plots.images import forget_images  # noqa: E402
from tests.support.alignments import make_alignment  # noqa: E402

SENTENCE = "a man in a blue shirt is playing the guitar with a man"
TRANSLATION = "un homme en chemise bleue joue de la guitare avec un homme"
ASKS = ["png", "svg", "pdf", "png"]  # the buttons pressed, the last one after a rerun


def build():
    """The figure as a rerun builds it (a new object each time)."""
    panels = {f"model-{k}": make_alignment(SENTENCE.split(" "), TRANSLATION.split(" "), seed=k) for k in range(3)}
    return paper_figure(panels, {n: "additive / luong" for n in panels}, SENTENCE)


def before(fmt: str) -> bytes:
    """One file as each button drew it before: a kaleido Chromium started for it."""
    return build().to_image(format=fmt, scale=2.0 if fmt == "png" else 1.0)


def after(fmt: str) -> bytes:
    """One file as each button draws it now (attnviz_app/app_pages/shared/paper_ui.py)."""
    return figure_images(build(), IMAGE_FORMATS)[fmt]


def timed(draw) -> list[float]:
    out = []
    for fmt in ASKS:
        start = time.perf_counter()
        draw(fmt)
        out.append(time.perf_counter() - start)
    return out


def machine() -> str:
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
        names = [line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")]
        return f"{names[0]}, {len(names)} cores, load {os.getloadavg()[0]:.2f}"
    except (OSError, IndexError):
        return platform.processor() or platform.machine()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args()
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)  # the --out folder, before any work
    figure_images(build(), ["svg"])  # kaleido and Chromium loaded once, not counted
    runs: dict[str, list[list[float]]] = {"before": [], "after": []}
    for _ in range(args.rounds):  # interleaved: both ways see the same load
        runs["before"].append(timed(before))
        forget_images()
        runs["after"].append(timed(after))
    result = {"machine": machine(), "rounds": args.rounds, "asks": ASKS, "seconds": {}}
    for way, rounds in runs.items():
        per_ask = [statistics.median(r[k] for r in rounds) for k in range(len(ASKS))]
        totals = [sum(r) for r in rounds]
        result["seconds"][way] = {
            "median per ask": [round(x, 3) for x in per_ask],
            "total, median": round(statistics.median(totals), 3),
            "total, range": [round(min(totals), 3), round(max(totals), 3)],
        }
        asks = ", ".join(f"{a} {x:.2f} s" for a, x in zip(ASKS, per_ask, strict=True))
        spread = f"{min(totals):.2f}-{max(totals):.2f}"
        print(f"{way:>6}: per ask {asks}; all four {statistics.median(totals):.2f} s ({spread})")
    print(result["machine"])
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
