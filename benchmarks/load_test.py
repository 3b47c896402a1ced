"""Load test of the running app: N real browser sessions translating while another session trains.

Starts one ``streamlit run app.py`` on a free loopback port and one headless Chromium (Debian's
``/usr/bin/chromium`` through Playwright's async API) with one browser context per Streamlit
session:

- one *training* session opens the Train page, picks the built-in ``dates`` task and presses
  "Start training"; the test goes on once its progress bar says ``running`` (and, at the end,
  reads the bar again: ``running_at_end`` says whether the training lasted the whole test);
- then N *translating* sessions (default 8, at most 16) open the Explore page and wait for the
  default model's heatmap; once all are there, each types K sentences (default 5) of the default
  model's task, pressing Enter, and measures the seconds from Enter to the heatmap redrawn with
  the sentence's tokens (its x tick labels).

Every sentence is different (the app caches translations per text, shared by all sessions), so
every Enter makes the server decode. The whole run is bounded by ``--timeout``; any heatmap that
is not drawn, any error shown by the app or the timeout makes the exit status 1.

    python benchmarks/load_test.py --sessions 8 --sentences 5 --timeout 300 [--write]

Prints a JSON report; ``--write`` also saves it to ``benchmarks/results/load_results.json``.
The app's side (default model, sentences, server) is in ``load_app.py``, the browser sessions in
``load_sessions.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere: attnviz is imported lazily

from benchmarks.load_app import (  # noqa: E402
    DefaultModel,
    load_default_model,
    sentence_pool,
    server_env,
    server_threads_report,
    session_plans,
    start_server,
    stop_server,
)
from benchmarks.load_sessions import (  # noqa: E402
    CHROMIUM,
    TRAIN_TASK,
    WAIT_S,
    Deadline,
    SessionResult,
    TrainingResult,
    run_sessions,
)
from tests.support.browser import free_port, wait_healthy  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "load_results.json"
MAX_SESSIONS = 16
GOAL_P95_S = 2.0
GOAL_SERVER_P95_S = 0.3  # the server's time per rerun, 8 sessions and a training


# ---------------------------------------------------------------- the report


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (``q`` in 0..100); None without values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def summary(values: list[float]) -> dict[str, Any]:
    """Count, p50, p95, max and mean of ``values`` in seconds (3 decimals)."""

    def r(x: float | None) -> float | None:
        return None if x is None else round(x, 3)

    return {
        "n": len(values),
        "p50": r(percentile(values, 50)),
        "p95": r(percentile(values, 95)),
        "max": r(max(values, default=None)),
        "mean": r(statistics.fmean(values) if values else None),
    }


def server_reruns(log: Path, since: float, until: float = math.inf, field: str = "seconds") -> list[float]:
    """Each Explore rerun the server logged (app.py, ``ATTNVIZ_RERUN_LOG``) that ended from ``since``
    to ``until``: its wall ``seconds`` (waits for the cores and the GIL included) or its script
    thread's ``cpu_seconds``."""
    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()] if log.exists() else []
    return [r[field] for r in rows if r["page"] == "explore" and since <= r["at"] <= until]


def build_report(
    args: argparse.Namespace,
    model: DefaultModel,
    plans: list[list[str]],
    results: list[SessionResult],
    training: TrainingResult,
    timed_out: bool,
    env: dict[str, str],
    started: float,
    load_before: float,
) -> dict[str, Any]:
    """The JSON report of one run."""
    latencies = [x for r in results for x in r.latencies_s]
    failures = [f for r in results for f in r.failures] + training.failures
    expected = sum(len(p) for p in plans)
    failures += [f"{expected - len(latencies)} of {expected} heatmaps not drawn"] if len(latencies) < expected else []
    failures += [f"the run passed its {args.timeout:.0f} s timeout"] if timed_out else []
    p95 = percentile(latencies, 95)
    log, since = Path(env["ATTNVIZ_RERUN_LOG"]), min((r.typing_from for r in results if r.typing_from), default=0.0)
    return {
        "server_explore_rerun_s": summary(server_reruns(log, since)),  # per Explore rerun while typing
        "server_explore_rerun_cpu_s": summary(server_reruns(log, since, field="cpu_seconds")),
        "goal_server_p95_s": GOAL_SERVER_P95_S,
        "n_sessions": len(plans),
        "browser_nice": args.browser_nice,
        "server_cpus": args.server_cpus,
        "browser_cpus": args.browser_cpus,
        "sentences_each": args.sentences,
        "heatmaps_expected": expected,
        "heatmaps_drawn": len(latencies),
        "enter_to_redrawn_heatmap_s": summary(latencies),
        "open_to_first_heatmap_s": summary([r.first_heatmap_s for r in results if r.first_heatmap_s is not None]),
        "goal_p95_s": GOAL_P95_S,
        "goal_met": p95 is not None and p95 <= GOAL_P95_S and not failures,
        "failures": len(failures),
        "failure_messages": failures,
        "timed_out": timed_out,
        "training": {
            "task": TRAIN_TASK,
            "epochs": args.train_epochs,
            "pairs": args.train_pairs,
            "started": training.started,
            "status_at_start": training.status_at_start,
            "status_at_end": training.status_at_end,
            "running_at_end": training.running_at_end,
        },
        "model": f"{model.name} ({model.task})",
        "server_torch_threads": server_threads_report(env),
        "load_average_1min": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
        "machine": {
            "cpu_count": os.cpu_count(),
            "platform": f"{platform.system()} {platform.machine()}",
            "python": platform.python_version(),
            "browser": "Chromium headless, one context per session",
        },
        "wall_s": round(time.monotonic() - started, 1),
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


# ---------------------------------------------------------------- the command line


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=8, help=f"translating browser sessions (1..{MAX_SESSIONS})")
    parser.add_argument("--sentences", type=int, default=5, help="sentences typed by each session")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds for the whole run, server start included")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="set ATTNVIZ_THREADS for the server (torch threads per session; app default 1)",
    )
    parser.add_argument("--train-epochs", type=int, default=30, help="epochs of the background training (1..50)")
    parser.add_argument("--train-pairs", type=int, default=4000, help="its training pairs (50..50000)")
    parser.add_argument(
        "--browser-nice", type=int, default=0, help="run the browsers at this nice level (0..19; server at 0)"
    )
    parser.add_argument("--server-cpus", help="run the server only on these cores (taskset list, e.g. 0)")
    parser.add_argument("--browser-cpus", help="run the browsers only on these cores (taskset list, e.g. 1)")
    parser.add_argument("--write", action="store_true", help=f"also write the report to {RESULTS.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    if not 1 <= args.sessions <= MAX_SESSIONS:
        parser.error(f"--sessions must be 1..{MAX_SESSIONS}")
    if not 0 <= args.browser_nice <= 19:
        parser.error("--browser-nice must be 0..19")
    if not 1 <= args.sentences <= 50:
        parser.error("--sentences must be 1..50")
    if not 10 <= args.timeout <= 3600:
        parser.error("--timeout must be 10..3600 s")
    if not (1 <= args.train_epochs <= 50 and 50 <= args.train_pairs <= 50_000):
        parser.error("--train-epochs must be 1..50 and --train-pairs 50..50000 (the Train page's limits)")
    return args


def log_tail(path: Path, lines: int = 30) -> str:
    """The last lines of the server's log."""
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Start the server, run the sessions, stop the server; the report."""
    started, load_before = time.monotonic(), os.getloadavg()[0]
    deadline = Deadline(started + args.timeout)
    with tempfile.TemporaryDirectory(prefix="attnviz-load-") as tmp:
        env = server_env(Path(tmp), args.threads)
        os.environ["ATTNVIZ_MODELS"] = env["ATTNVIZ_MODELS"]  # this process lists the same models as the server
        model = load_default_model()
        plans = session_plans(sentence_pool(model, args.sessions * args.sentences), args.sessions, args.sentences)
        port, log_path = free_port(), Path(tmp) / "streamlit.log"
        proc = start_server(port, env, log_path, args.server_cpus)
        try:
            wait_healthy(port, proc, timeout=min(WAIT_S, deadline.left()))
            url = f"http://127.0.0.1:{port}"
            results, training, timed_out = asyncio.run(
                run_sessions(url, model, plans, args, deadline, Path(env["HOME"]))
            )
        finally:
            stop_server(proc)
        report = build_report(args, model, plans, results, training, timed_out, env, started, load_before)
        if report["failures"]:
            print(f"streamlit log (last lines):\n{log_tail(log_path)}", file=sys.stderr)
    return report


def main(argv: list[str] | None = None) -> int:
    """Run the load test; exit status 1 on any failure or timeout."""
    args = parse_args(argv)
    if not CHROMIUM.exists():
        print(f"{CHROMIUM} is missing: apt-get install -y chromium (never `playwright install`)", file=sys.stderr)
        return 2
    report = run(args)
    text = json.dumps(report, indent=1, ensure_ascii=False)
    print(text)
    if args.write:
        RESULTS.write_text(text + "\n", encoding="utf-8")
    return 1 if report["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
