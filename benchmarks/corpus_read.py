"""How long measuring a Multi30k model waits for its corpus: ``attnviz evaluate --n 1`` cold and warm.

    python benchmarks/corpus_read.py --rounds 5 --out benchmarks/results/corpus_read.json
    python benchmarks/corpus_read.py --root . --root ../base --rounds 5   # beside another checkout
    python benchmarks/corpus_read.py --check   # the compiled tokenizer against the plain one, all of Multi30k

Each round runs, in fresh processes, for every ``--root`` (a checkout: its own ``attnviz`` is
imported; the models come from this checkout's ``pretrained/``): ``cold``, with empty caches
(``$ATTNVIZ_CORPUS_CACHE`` and ``$ATTNVIZ_DATASETS_CACHE`` in a new folder), then ``warm``, with the
caches that cold run filled. Each mode is timed twice: ``python -m attnviz evaluate --model MODEL
--n 1 --json`` as a user types it (``wall_s``, and the child's user + system ``cpu_s``), then the same
steps in a script that times each, wall and CPU seconds (``import`` of attnviz, ``load`` of the
model, ``corpus``: the test pairs through ``own_pairs``, ``evaluate`` of one pair), and then
``all_splits``: ``load_corpus`` of every split, as a training reads it. Every run must print the
same metrics.

``--check`` reads every Multi30k file (en, de, fr; train, val, test) and compares, line by line,
``attnviz.data.multi30k.text_lines`` with the ``datasets`` text builder, and each tokenizer (words,
lowercased or not; characters) with the plain character walk of
``tests/support/tokenize_reference.py``, with the CPU seconds of both.
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
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_MODEL = "multi30k-de-en-additive-bahdanau"
STAGES = """
import json, sys, time
marks = [(time.perf_counter(), time.process_time())]
import attnviz
from attnviz.data import load_corpus
from attnviz.evaluation.evaluate import evaluate, measured_on, own_pairs
marks.append((time.perf_counter(), time.process_time()))
model = attnviz.load(sys.argv[1], device="cpu")
marks.append((time.perf_counter(), time.process_time()))
pairs = own_pairs(model, n=1)
marks.append((time.perf_counter(), time.process_time()))
report = evaluate(model, pairs)
marks.append((time.perf_counter(), time.process_time()))
spec, options = measured_on(model.meta)
corpus = load_corpus(spec, **options)
marks.append((time.perf_counter(), time.process_time()))
names = ("import", "load", "corpus", "evaluate", "all_splits")
print(json.dumps({n: [round(b[0] - a[0], 3), round(b[1] - a[1], 3)] for n, a, b in zip(names, marks, marks[1:])}))
"""


def _child(command: list[str], root: Path, caches: Path) -> tuple[float, float, str]:
    """Wall and CPU seconds of one fresh process, and what it printed."""
    env = {
        **os.environ,
        "PYTHONPATH": str(root),
        "ATTNVIZ_PRETRAINED": str(ROOT / "pretrained"),
        "ATTNVIZ_CORPUS_CACHE": str(caches / "corpus"),
        "ATTNVIZ_DATASETS_CACHE": str(caches / "datasets"),
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
    }
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} in {root} failed:\n{done.stderr[-2000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, done.stdout


def _commit(root: Path) -> str | None:
    """The commit a checkout is at (with ``+`` when its files differ from it), None outside git."""

    def git(*argv: str) -> str:
        return subprocess.run(["git", "-C", str(root), *argv], capture_output=True, text=True, check=True).stdout

    try:
        return git("rev-parse", "--short", "HEAD").strip() + (
            "+" if git("status", "--porcelain", "--", "attnviz") else ""
        )
    except (OSError, subprocess.CalledProcessError):
        return None


def measure(roots: list[Path], model: str, rounds: int) -> list[dict]:
    """Every run of every round: the command and the timed script, cold then warm, per root."""
    command = [sys.executable, "-m", "attnviz", "evaluate", "--model", model, "--n", "1", "--json"]
    script = [sys.executable, "-c", STAGES, model]
    runs = []
    for k in range(rounds):
        for root in roots:
            with tempfile.TemporaryDirectory(prefix="corpus-read-") as tmp:
                for mode in ("cold", "warm"):
                    for what, argv in (("command", command), ("stages", script)):
                        # cold: a new, empty folder; warm: the one the cold run of the same kind filled
                        wall, cpu, out = _child(argv, root, Path(tmp) / what)
                        run = {"round": k + 1, "root": str(root), "mode": mode, "what": what}
                        run |= {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3)}
                        if what == "command":
                            run["metrics"] = {key: v for key, v in json.loads(out).items() if key != "model"}
                        else:
                            run["stages_s"] = json.loads(out)
                        print(json.dumps({key: v for key, v in run.items() if key != "metrics"}), flush=True)
                        runs.append(run)
    return runs


def summarize(runs: list[dict]) -> dict:
    """Median and least seconds per root and mode; refuses runs whose metrics differ."""
    metrics = {json.dumps(r["metrics"], sort_keys=True) for r in runs if r["what"] == "command"}
    if len(metrics) != 1:
        raise SystemExit(f"the runs printed different metrics: {sorted(metrics)}")
    summary: dict[str, dict] = {}
    for root in dict.fromkeys(r["root"] for r in runs):
        for mode in ("cold", "warm"):
            mine = [r for r in runs if r["root"] == root and r["mode"] == mode]
            walls = [r["wall_s"] for r in mine if r["what"] == "command"]
            cpus = [r["cpu_s"] for r in mine if r["what"] == "command"]
            stages = [r["stages_s"] for r in mine if r["what"] == "stages"]
            summary.setdefault(root, {})[mode] = {
                "wall_s_median": round(statistics.median(walls), 3),
                "wall_s_min": min(walls),
                "cpu_s_median": round(statistics.median(cpus), 3),
                "stages_wall_cpu_s_median": {
                    k: [round(statistics.median(s[k][i] for s in stages), 3) for i in (0, 1)] for k in stages[0]
                },
            }
    return {"metrics": json.loads(metrics.pop()), "by_root": summary}


def check() -> dict:
    """``text_lines`` against ``datasets`` and every tokenizer against the plain walk, on all of Multi30k."""
    import gzip

    from attnviz.data import corpora
    from attnviz.data.multi30k import MULTI30K_FILES, MULTI30K_LANGUAGES, default_multi30k, text_lines
    from attnviz.data.tokenize import Tokenizer
    from tests.support import tokenize_reference

    files = [
        default_multi30k() / f"{stem}.{lang}.gz" for stem in MULTI30K_FILES.values() for lang in MULTI30K_LANGUAGES
    ]
    lines: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        read = corpora.load_files("text", {f"f{i}": str(f) for i, f in enumerate(files)}, cache_dir=tmp)
        for i, path in enumerate(files):
            mine = text_lines(gzip.decompress(path.read_bytes()))
            if mine != list(read[f"f{i}"]["text"]):
                raise SystemExit(f"{path}: text_lines differs from the datasets text builder")
            lines += mine
    out = {"files": len(files), "lines": len(lines), "tokenizers": []}
    for tokenizer in (Tokenizer("word"), Tokenizer("word", lowercase=False), Tokenizer("char")):
        start = time.process_time()
        compiled = [tokenizer.tokenize(line) for line in lines]
        middle = time.process_time()
        plain = [tokenize_reference.tokenize(tokenizer, line) for line in lines]
        end = time.process_time()
        differ = sum(a != b for a, b in zip(compiled, plain, strict=True))
        row = {"tokenizer": tokenizer.describe(), "lines_that_differ": differ, "tokens": sum(map(len, compiled))}
        out["tokenizers"].append(
            row | {"compiled_cpu_s": round(middle - start, 3), "plain_cpu_s": round(end - middle, 3)}
        )
        print(json.dumps(out["tokenizers"][-1]), flush=True)
    if any(row["lines_that_differ"] for row in out["tokenizers"]):
        raise SystemExit("the compiled tokenizer cuts some line differently from the plain one")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", action="append", type=Path, help="a checkout to time (repeat; default this one)")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--check", action="store_true", help="compare the tokenizers on all of Multi30k instead")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    args = parser.parse_args()
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)  # the --out folder, before any work
    machine = {"machine": platform.processor() or platform.machine(), "cpus": os.cpu_count()}
    if args.check:
        result = {**machine, "check": check()}
    else:
        load = os.getloadavg()
        runs = measure([r.resolve() for r in args.root or [ROOT]], args.model, args.rounds)
        result = {**machine, "load_average": [load, os.getloadavg()], "model": args.model, "rounds": args.rounds}
        result["commits"] = {str(r.resolve()): _commit(r.resolve()) for r in args.root or [ROOT]}
        result |= {"summary": summarize(runs), "runs": runs}
        print(json.dumps(result["summary"], indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
