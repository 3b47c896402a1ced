"""The app under load_test.py: its default model, the sentences to type, and the server.

The model Explore opens on is loaded in the test's own process too, to know which tick labels
each typed sentence must produce; the server is one ``streamlit run app.py`` on a free loopback
port with a private HOME and models folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # a part of load_test.py, not a script of its own
    sys.exit("load_app.py is a part of load_test.py: run python benchmarks/load_test.py --help")

ROOT = Path(__file__).resolve().parents[1]
SENTENCE_SEED = 2024  # held apart from the seeds the shipped models were trained with (0)


# ---------------------------------------------------------------- the model and the sentences


@dataclass
class DefaultModel:
    """The model the Explore page shows first, and what it makes of a sentence."""

    translator: Any
    name: str
    task: str
    example: str

    def ticks(self, text: str) -> list[str]:
        """The heatmap's x tick labels for ``text``: the source tokens as typed, space as ␣, plus <eos>."""
        return [t.replace(" ", "␣") if t else "∅" for t in self.translator.source(text).surface]


def load_default_model() -> DefaultModel:
    """The model Explore opens on (attnviz.store's defaults), read in this process for the expected ticks."""
    from attnviz.store import front_entry, list_models, load, task_of

    first = front_entry(list_models())
    translator = load(first.path)
    return DefaultModel(translator, first.name, task_of(first), first.example or "")


def candidate_sentences(task: str, example: str, count: int) -> list[str]:
    """About ``count`` source sentences of ``task`` (its seeded generator), or variants of the example."""
    from attnviz.data import TASKS, task_pairs

    if task in TASKS:
        return [pair.source for pair in task_pairs(task, count, seed=SENTENCE_SEED)]
    if task.startswith("multi30k-en-"):  # English source: plain sentences of Multi30k's kind, all different
        who = ["A man", "A woman", "A young boy", "Two girls", "An old man", "A dog", "Three children", "A worker"]
        what = ["is walking", "is sitting", "is running", "is standing", "is playing", "is waiting"]
        where = ["on the street .", "in the park .", "near the water .", "in front of a building .", "on the grass ."]
        return [f"{a} {b} {c}" for a in who for b in what for c in where][:count]
    return [example.upper(), example.title(), example.lower(), f"{example} ."]


def sentence_pool(model: DefaultModel, needed: int) -> list[str]:
    """Sentences with pairwise different ticks (and different from the example's), so each Enter redraws."""
    seen = {tuple(model.ticks(model.example))} if model.example else set()
    pool = []
    for text in candidate_sentences(model.task, model.example, 2 * needed + 16):
        try:
            ticks = tuple(model.ticks(text))
        except Exception:  # too long for the model, or empty: skip it
            continue
        if ticks not in seen:
            seen.add(ticks)
            pool.append(text)
    if len(pool) < 2:
        raise SystemExit(f"cannot make test sentences for the default model's task {model.task!r}")
    return pool


def session_plans(pool: list[str], sessions: int, per_session: int) -> list[list[str]]:
    """``per_session`` sentences for each session, all different while the pool lasts, never twice in a row."""
    return [[pool[(s * per_session + k) % len(pool)] for k in range(per_session)] for s in range(sessions)]


# ---------------------------------------------------------------- the server


def server_env(tmp: Path, threads: int | None) -> dict[str, str]:
    """The server's environment: a private HOME and models folder (a training saves its model there)."""
    home, models = tmp / "home", tmp / "models"
    home.mkdir()
    models.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "ATTNVIZ_MODELS": str(models),
        "ATTNVIZ_RERUN_LOG": str(tmp / "reruns.jsonl"),
    }
    if threads is not None:  # the app's own knob: torch threads per session thread (attnviz/devices.py)
        env["ATTNVIZ_THREADS"] = str(threads)
    return env


def start_server(port: int, env: dict[str, str], log_path: Path, cpus: str | None = None) -> subprocess.Popen:
    """``streamlit run app.py`` headless on 127.0.0.1:``port``, its output into ``log_path``; with
    ``cpus`` (``taskset`` list, e.g. ``0``) only on those cores."""
    command = [
        *(["taskset", "-c", cpus] if cpus else []),
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.headless",
        "true",
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]
    with log_path.open("w") as log:
        return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def stop_server(proc: subprocess.Popen) -> None:
    """Terminate the server (and kill it if it does not stop)."""
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=15)


def server_threads_report(env: dict[str, str]) -> dict[str, Any]:
    """How torch's thread count is set in the server (read from the same code the app runs)."""
    from attnviz import devices as config

    saved = os.environ.get("ATTNVIZ_THREADS")
    os.environ.pop("ATTNVIZ_THREADS", None)
    if "ATTNVIZ_THREADS" in env:
        os.environ["ATTNVIZ_THREADS"] = env["ATTNVIZ_THREADS"]
    try:
        per_session = config.server_threads()
    finally:
        os.environ.pop("ATTNVIZ_THREADS", None)
        if saved is not None:
            os.environ["ATTNVIZ_THREADS"] = saved
    return {
        "ATTNVIZ_THREADS": env.get("ATTNVIZ_THREADS"),
        "OMP_NUM_THREADS": env.get("OMP_NUM_THREADS"),
        "torch_threads_per_session_thread": per_session,
        "torch_threads_training_thread": 1,
        "set_by": "attnviz/devices.py use_server_threads(), called by attnviz_app/app_pages/shared/common.py "
        "before decoding; "
        "trainings get num_threads=1 from attnviz/server/jobs.py JobRegistry.submit",
    }
