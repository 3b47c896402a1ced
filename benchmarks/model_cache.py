"""How much memory the app's shared model cache holds: every shipped model opened, in the order the
catalog lists them, twice over, through the cache the pages use (``attnviz_app.app_pages.shared.common``).

Run from the repository root::

    OMP_NUM_THREADS=1 python benchmarks/model_cache.py [--json FILE] [--no-release]

It reports the process's resident memory (``/proc/self/status`` VmRSS; Linux) before the first model,
after each one, at the end of each round, its peak, and the largest rise one model caused; the cache
holds at most ``MAX_MODELS``. ``--no-release`` loads without giving freed memory back first
(``attnviz.devices.release_free_memory``), to show what that does. Outside a Streamlit server the
cache keeps its entries in memory as the server does; the server's own memory (Streamlit, the pages)
comes on top.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import streamlit as st

# Outside a server each cache says it keeps its entries in memory (what the docstring says): not news here.
logging.getLogger("streamlit.runtime.caching.cache_data_api").setLevel(logging.ERROR)

from attnviz.store import ModelWarning, list_models  # noqa: E402
from attnviz_app.app_pages.shared import common  # noqa: E402


def rss_mb() -> float:
    """This process's resident memory in MB (1e6 bytes)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024 / 1e6
    raise RuntimeError("no VmRSS in /proc/self/status: this benchmark reads Linux's process status")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--no-release", action="store_true", help="keep freed memory in the process")
    args = parser.parse_args()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)  # the --json folder, before any work
    if args.no_release:
        common.release_free_memory = lambda: False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)
        entries = list_models()
    st.cache_resource.clear()
    gc.collect()
    start = rss_mb()
    rows, rounds = [], []
    for _ in range(2):
        for entry in entries:
            before = rss_mb()
            common.get_model(entry)
            rows.append({"model": entry.name, "rss_mb": round(rss_mb(), 1), "rise_mb": round(rss_mb() - before, 1)})
        rounds.append(round(rss_mb(), 1))
    result = {
        "models": len(entries),
        "max_models": common.MAX_MODELS,
        "release_free_memory": not args.no_release,
        "rss_start_mb": round(start, 1),
        "rss_after_each_round_mb": rounds,
        "rss_peak_mb": max(r["rss_mb"] for r in rows) if rows else round(start, 1),
        "largest_rise": max(rows, key=lambda r: r["rise_mb"]) if rows else None,
        "per_model": rows,
    }
    summary = {k: v for k, v in result.items() if k != "per_model"}
    print(json.dumps(summary, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
