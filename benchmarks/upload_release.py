"""Server memory and disk while three browser sessions upload a 45 MB file each, and after they end.

Starts ``streamlit run app.py`` (its temp folder, hence its uploads and datasets cache, in a
fresh folder; ``server.disconnectedSessionTTL`` set by ``--ttl``), opens three tabs in Chromium
(three Streamlit sessions), and in each uploads a different ~45 MB CSV (100,000 rows of 40 to
42 words a side) on the Data page and waits for its summary. Then it closes the tabs and waits
``--ttl`` plus ``--settle`` seconds; then one more tab opens the Data page and closes: Streamlit
drops expired sessions only when it next stores a disconnected one (its session storage reaps
them on a write), so the ended sessions' own state (widget values, messages) goes then. After
each step it reports the server's resident memory (``VmRSS``) and the disk used by the uploads
folder and the datasets cache.

    .venv/bin/python benchmarks/upload_release.py --ttl 10 [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.upload_load import rss_mb, write_csv  # noqa: E402
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, streamlit_app  # noqa: E402

WAIT_MS = 600_000  # a 45 MB upload on a loaded machine can take minutes


def server_pid(port: str) -> int:
    """The ``streamlit run`` process listening on ``port``."""
    for proc in Path("/proc").iterdir():
        try:
            command = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"streamlit" in b" ".join(command) and port.encode() in command:
            return int(proc.name)
    raise RuntimeError(f"no streamlit process on port {port}")


def disk_mb(folder: Path) -> float:
    names = ("attnviz-uploads-*", "attnviz-datasets-*")  # each user's own (store.upload_root, corpora.CACHE_DIR)
    total = sum(f.stat().st_size for name in names for d in folder.glob(name) for f in d.rglob("*") if f.is_file())
    return round(total / 2**20, 1)


def run(ttl: int, settle: float, folder: Path) -> list[dict]:
    from playwright.sync_api import sync_playwright

    tables = [write_csv(folder / f"upload-{words}.csv", 100_000, words) for words in (40, 41, 42)]
    temp = Path(tempfile.mkdtemp(prefix="attnviz-release-"))
    env = {
        **os.environ,
        "TMPDIR": str(temp),
        "HOME": str(temp),
        "OMP_NUM_THREADS": "1",
        "STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": str(ttl),
    }
    steps = []
    with streamlit_app(env) as (url, _), sync_playwright() as p:
        pid = server_pid(url.rsplit(":", 1)[1])

        def note(step: str) -> None:
            steps.append({"step": step, "rss_mb": rss_mb(pid), "disk_mb": disk_mb(temp)})
            print(steps[-1], file=sys.stderr)

        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        pages = []
        for k, table in enumerate(tables):
            page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            page.goto(f"{url}/data", wait_until="domcontentloaded")
            page.get_by_text("Uploaded file").first.click(timeout=WAIT_MS)
            if k == 0:
                page.get_by_text("Upload a CSV").first.wait_for(timeout=WAIT_MS)
                note("Data page open (torch loaded)")
            page.locator("input[type=file]").first.set_input_files(str(table), timeout=WAIT_MS)
            page.get_by_text("train pairs").first.wait_for(timeout=WAIT_MS)
            pages.append(page)
            note(f"upload {k + 1} shown ({table.stat().st_size / 2**20:.0f} MB)")
        for page in pages:
            page.context.close()
        time.sleep(ttl + settle)
        note(f"tabs closed, {ttl + settle:.0f} s later")
        page = browser.new_context().new_page()
        page.goto(f"{url}/data", wait_until="domcontentloaded")
        page.get_by_text("Uploaded file").first.wait_for(timeout=WAIT_MS)
        page.context.close()  # its disconnect stores it, and drops the expired sessions
        time.sleep(5)
        note("one more tab opened and closed")
        browser.close()
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ttl", type=int, default=10, help="server.disconnectedSessionTTL (Streamlit's default: 120)")
    parser.add_argument("--settle", type=float, default=20.0, help="seconds waited after the TTL")
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "attnviz-bench")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    steps = run(args.ttl, args.settle, args.folder)
    if args.json:
        print(json.dumps(steps, indent=2))
        return
    print(f"{'step':<36} {'server RSS MB':>14} {'uploads + datasets cache MB':>28}")
    for s in steps:
        print(f"{s['step']:<36} {s['rss_mb']:>14} {s['disk_mb']:>28}")


if __name__ == "__main__":
    main()
