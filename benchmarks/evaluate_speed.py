"""``attnviz evaluate`` against translating one sentence at a time, and its forced decoding pair by pair
against in batches, on the first N test pairs of a model's own data (Multi30k de-en by default).

``evaluate --beam B`` translates with batched beam search, then forces the decoder through every
reference for the attention entropy (and AER where there are gold links). Each round times, in
one process and in turn:

* ``one at a time``: every source through ``Translator.translate(s, beam_size=B)`` (the baseline);
* ``evaluate, forcing pair by pair``: ``evaluate(..., align=False)`` and ``Translator.align``
  pair by pair, with the entropy of those alignments;
* ``evaluate``: ``attnviz.evaluation.evaluate`` as the CLI runs it (forcing in batches,
  ``Translator.align_batch``);
* the parts: batched beam (``translate_all``), forcing pair by pair, forcing in batches.

The speed-ups are the median seconds of ``one at a time`` over the median of each row, in
wall-clock and in CPU seconds of the process (steadier when other jobs share the cores). The corpus
read (``own_pairs``) and the model load are timed once, at the start, and reported apart: they are
a fixed cost of every CLI run. ``--cli`` also times the whole ``python -m attnviz evaluate`` command
of this checkout (and with ``--cli-baseline DIR`` of another checkout, e.g. the commit before a
change, in turn with it; CPU seconds from ``getrusage`` of the child), and checks that the printed
metrics agree.

    python benchmarks/evaluate_speed.py --threads 1 2 --cli --cli-baseline ../base \\
        --out benchmarks/results/evaluate_speed.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from attnviz.data import Pair  # noqa: E402
from attnviz.decoding import Translator  # noqa: E402
from attnviz.devices import describe  # noqa: E402
from attnviz.errors import InputError  # noqa: E402
from attnviz.evaluation import metrics  # noqa: E402
from attnviz.evaluation.evaluate import evaluate, force_all, own_pairs, translate_all  # noqa: E402
from attnviz.store import load  # noqa: E402

MODEL = "multi30k-de-en-additive-bahdanau"


def timed(fn: Callable[[], object]) -> tuple[object, float, float]:
    """``fn()``, its wall-clock seconds and the CPU seconds of this process."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def pair_by_pair(translator: Translator, pairs: list[Pair], beam: int) -> dict:
    """What ``evaluate`` gives with each reference forced alone (``Translator.align`` per pair)."""
    report = evaluate(translator, pairs, beam_size=beam, align=False)
    hard, sure, possible, weights = [], [], [], []
    for pair in pairs:
        try:
            al = translator.align(pair.source, pair.target)
        except InputError:
            continue
        weights.append(al.weights)
        if pair.sure is not None:
            hard.append(metrics.alignment_links(al, len(pair.source_tokens), len(pair.target_tokens)))
            sure.append(pair.sure)
            possible.append(pair.possible or pair.sure)
    report.entropy = metrics.mean_entropy(weights)
    report.aer = metrics.aer(hard, sure, possible) if sure else None
    return report.to_dict()


def cli(checkout: Path, model: str, beam: int, n: int, threads: int) -> tuple[str, float, float]:
    """``python -m attnviz evaluate`` run from ``checkout``: its printed lines, wall-clock and CPU seconds."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "attnviz", "evaluate", "--model", model, "--beam", str(beam), "--n", str(n)]
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True, check=True)
    wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    return done.stdout, wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def summary(values: list[float]) -> dict:
    rounded = [round(v, 2) for v in values]
    return {"median": round(statistics.median(values), 2), "min": min(rounded), "rounds": rounded}


def measure(
    translator: Translator, pairs: list[Pair], args: argparse.Namespace, threads: int, fixed: tuple[float, float]
) -> dict:
    """Every row's seconds over ``args.rounds`` rounds at ``threads`` torch threads, and the speed-ups;
    ``fixed``: the wall-clock and CPU seconds of the corpus read and the model load."""
    torch.set_num_threads(threads)
    beam = args.beam
    translator.translate_batch([p.source for p in pairs[:20]], beam_size=beam)  # warm-up: allocator, kernels
    translator.align_batch([p.source for p in pairs[:20]], [p.target for p in pairs[:20]])
    rows: dict[str, Callable[[], object]] = {
        "one at a time": lambda: [translator.text_of(translator.translate(p.source, beam_size=beam)) for p in pairs],
        "evaluate, forcing pair by pair": lambda: pair_by_pair(translator, pairs, beam),
        "evaluate": lambda: evaluate(translator, pairs, beam_size=beam).to_dict(),
        "batched beam": lambda: translate_all(translator, pairs, beam),
        "forcing pair by pair": lambda: [translator.align(p.source, p.target) for p in pairs],
        "forcing in batches": lambda: force_all(translator, pairs),
    }
    checkouts = {"this checkout": ROOT} | ({"baseline": Path(args.cli_baseline)} if args.cli_baseline else {})
    wall: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    results: dict[str, object] = {}
    printed: dict[str, str] = {}
    for k in range(args.rounds):
        for name, fn in rows.items():
            results[name], w, c = timed(fn)
            wall.setdefault(name, []).append(w)
            cpu.setdefault(name, []).append(c)
        for label, checkout in checkouts.items() if args.cli else ():
            printed[label], w, c = cli(checkout, args.model, beam, args.n, threads)
            wall.setdefault(f"cli, {label}", []).append(w)
            cpu.setdefault(f"cli, {label}", []).append(c)
        print(f"{threads} thread(s), round {k + 1}: " + ", ".join(f"{n} {w[-1]:.1f} s" for n, w in wall.items()))

    def speedups(seconds: float, cpu_seconds: float) -> dict:
        """One at a time's median seconds over these: wall-clock, and CPU (steadier on a loaded machine)."""
        base, base_cpu = statistics.median(wall["one at a time"]), statistics.median(cpu["one at a time"])
        return {"wall": round(base / seconds, 2), "cpu": round(base_cpu / cpu_seconds, 2)}

    table = [
        {
            "measure": name,
            "seconds": summary(wall[name]),
            "cpu_seconds": summary(cpu[name]),
            "speedup": speedups(statistics.median(wall[name]), statistics.median(cpu[name])),
        }
        for name in wall
    ]
    fixed_s, fixed_cpu = fixed
    evaluate_s, evaluate_cpu = statistics.median(wall["evaluate"]), statistics.median(cpu["evaluate"])
    return {
        "threads": threads,
        "hardware": describe(translator.device),
        "rows": table,
        "speedup_model_part": speedups(evaluate_s, evaluate_cpu),
        "speedup_with_read_and_load": speedups(evaluate_s + fixed_s, evaluate_cpu + fixed_cpu),
        "figures": {"evaluate": results["evaluate"], "pair by pair": results["evaluate, forcing pair by pair"]},
        "same_figures": results["evaluate"] == results["evaluate, forcing pair by pair"],
        "cli_printed": printed,
        "cli_same_printed": len(set(printed.values())) <= 1,
    }


def show(run: dict) -> None:
    print(f"\n{run['hardware']}")
    print(f"{'measure':<32} {'wall s':>8} {'cpu s':>8} {'speed-up wall':>14} {'cpu':>7}")
    for row in run["rows"]:
        figures = f"{row['seconds']['median']:>8.2f} {row['cpu_seconds']['median']:>8.2f}"
        print(f"{row['measure']:<32} {figures} {row['speedup']['wall']:>13.2f}x {row['speedup']['cpu']:>6.2f}x")
    model_part, whole = run["speedup_model_part"], run["speedup_with_read_and_load"]
    print(
        f"evaluate against one at a time, wall / CPU: {model_part['wall']}x / {model_part['cpu']}x (model part), "
        f"{whole['wall']}x / {whole['cpu']}x with the corpus read and model load"
    )
    print(f"same figures as forcing pair by pair: {run['same_figures']}; {run['figures']['evaluate']}")
    if run["cli_printed"]:
        print(f"the CLI printed the same metrics from every checkout: {run['cli_same_printed']}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default=MODEL, help=f"a model name or checkpoint (default {MODEL})")
    p.add_argument("--n", type=int, default=300, help="the first N test pairs (default 300)")
    p.add_argument("--beam", type=int, default=5)
    p.add_argument("--rounds", type=int, default=3, help="rounds of every measurement, in turn (default 3)")
    p.add_argument(
        "--threads",
        type=int,
        nargs="+",
        default=[1],
        help="torch CPU threads; several measure each in turn (default 1)",
    )
    p.add_argument("--cli", action="store_true", help="also time the whole `attnviz evaluate` command")
    p.add_argument("--cli-baseline", help="another checkout whose `attnviz evaluate` is timed in turn (with --cli)")
    p.add_argument("--out", help="write the JSON here, e.g. benchmarks/results/evaluate_speed.json")
    args = p.parse_args(argv)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)  # the --out folder, before any work

    torch.set_num_threads(args.threads[0])
    translator, load_s, load_cpu = timed(lambda: load(args.model))
    pairs, read_s, read_cpu = timed(lambda: own_pairs(translator, n=args.n))
    fixed = (read_s + load_s, read_cpu + load_cpu)
    print(f"{len(pairs)} pairs, beam {args.beam}")
    print(f"corpus read {read_s:.2f} s ({read_cpu:.2f} CPU), model load {load_s:.2f} s ({load_cpu:.2f} CPU), once")
    runs = [measure(translator, pairs, args, threads, fixed) for threads in args.threads]
    for run in runs:
        show(run)
    report = {
        "model": args.model,
        "pairs": len(pairs),
        "beam": args.beam,
        "rounds": args.rounds,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "corpus_read": {"seconds": round(read_s, 2), "cpu_seconds": round(read_cpu, 2)},
        "model_load": {"seconds": round(load_s, 2), "cpu_seconds": round(load_cpu, 2)},
        "cli_baseline": args.cli_baseline,
        "runs": runs,
    }
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
