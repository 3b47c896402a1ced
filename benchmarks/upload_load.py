"""Time and peak memory of loading a large uploaded CSV through the Data page.

Writes a CSV of ``--rows`` sentence pairs of ``--words`` words a side (two columns, en and fr;
with 3 words about 50 bytes a row, so a million rows fit under the server's 50 MB upload limit)
to ``--folder``, then, in a fresh Python process per measurement, drives the Data page with
``streamlit.testing.v1.AppTest``: "Uploaded file", the file given to the uploader, the page run
until it shows the corpus. That is the path a browser upload takes (the uploader, ``data_ui``,
``load_corpus``, the corpus cache, the summary).

Reports the seconds of that run, the process's peak RSS (``resource.getrusage``) and its RSS
before the upload (Streamlit, torch and attnviz imported), the pairs the page shows and its
messages about the file.

    .venv/bin/python benchmarks/upload_load.py --rows 100000 1000000 --words 3 [--json]
    .venv/bin/python benchmarks/upload_load.py --rows 100000 --words 36   # 40 MB of long rows
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORDS = ["cat", "dog", "girl", "boy", "apple", "car", "house", "eats", "sees", "likes", "red", "old"]
FRENCH = ["chat", "chien", "fille", "garçon", "pomme", "voiture", "maison", "mange", "voit", "aime", "rouge", "vieux"]


def write_csv(path: Path, rows: int, words: int) -> Path:
    """``rows`` distinct pairs of ``words`` words and a number a side: ``cat girl 12345,chat fille 12345``."""
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    n = len(WORDS)
    with path.open("w", encoding="utf-8") as f:
        f.write("en,fr\n")
        for i in range(rows):
            picks = [(i // n**k + k) % n for k in range(words)]
            english, french = (" ".join(vocab[p] for p in picks) for vocab in (WORDS, FRENCH))
            f.write(f"{english} {i},{french} {i}\n")
    return path


def rss_mb(pid: int | str = "self") -> float:
    """A process's resident memory now, in MB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024)
    return float("nan")


def measure(path: Path) -> dict:
    """One upload of ``path`` on the Data page, in this process (run it in a fresh one)."""
    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    from streamlit.testing.v1 import AppTest

    import attnviz.data  # noqa: F401  (torch and datasets imported before the baseline)

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
    at.run()
    at.switch_page("attnviz_app/app_pages/data.py").run()
    at.radio(key="data_kind").set_value("Uploaded file").run()
    baseline = rss_mb()
    at.file_uploader(key="data_upload").set_value((path.name, path.read_bytes(), "text/csv"))
    started = time.perf_counter()
    at.run()
    seconds = time.perf_counter() - started
    metrics = {m.label: m.value for m in at.metric}
    messages = [e.value for e in (*at.error, *at.warning)] + [c.value for c in at.caption if c.value.startswith("ℹ️")]
    return {
        "rows": sum(1 for _ in path.open("rb")) - 1,
        "words": len(next(itertools.islice(path.open(encoding="utf-8"), 1, None)).split(",")[0].split()) - 1,
        "file_mb": round(path.stat().st_size / 2**20, 1),
        "seconds": round(seconds, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "baseline_rss_mb": baseline,
        "train_pairs": metrics.get("train pairs"),
        "exception": bool(at.exception),
        "messages": messages,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--words", type=int, nargs="+", default=[3], help="words a side per row (one file each)")
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "attnviz-bench")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return
    results = []
    for rows, words in itertools.product(args.rows, args.words):
        path = write_csv(args.folder / f"pairs-{rows}x{words}.csv", rows, words)
        command = [sys.executable, __file__, "--measure", str(path)]
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        child = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
        results.append(json.loads(child.stdout.strip().splitlines()[-1]))
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(
        f"{'rows':>9} {'words':>6} {'file MB':>8} {'seconds':>8} {'peak RSS MB':>12} {'RSS before MB':>14} "
        f"{'train pairs':>12}"
    )
    for r in results:
        print(
            f"{r['rows']:>9} {r['words']:>6} {r['file_mb']:>8} {r['seconds']:>8} {r['peak_rss_mb']:>12} "
            f"{r['baseline_rss_mb']:>14} {r['train_pairs']!s:>12}"
        )
        for message in r["messages"]:
            print(f"{'':>9} {message.replace(chr(92), '')}")  # unescaped Markdown


if __name__ == "__main__":
    main()
