"""Memory and time of ``attnviz data --summary`` on a large generated CSV: the streamed summary
(``attnviz.data.summarize_spec``, what the command runs) against the whole corpus in memory
(``summarize(load_corpus(spec))``), each in a fresh process; the peak resident memory is the
process's own ``ru_maxrss``, its imports included.

``imports_only`` is the peak of a process that only imports ``attnviz.data``, datasets and torch.
Both summaries import ``attnviz.data`` and datasets but not torch, so it is a point of comparison,
not a floor: on a small file their peaks come out below it.

    .venv/bin/python benchmarks/data_summary.py --mb 100 --out benchmarks/results/data_summary.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STREAMED = "from attnviz.data import summarize_spec; import sys; summarize_spec(sys.argv[1])"
IN_MEMORY = "from attnviz.data import load_corpus, summarize; import sys; summarize(load_corpus(sys.argv[1]))"
IMPORTS = "import attnviz.data, datasets, torch"


def write_csv(path: Path, megabytes: float, seed: int = 0) -> int:
    """Sentence pairs of 5 to 20 words from a 20,000-word vocabulary (1 in 50 repeated); the rows."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(20_000)]
    size, rows, previous = 0, 0, ""
    with path.open("w", encoding="utf-8") as f:
        f.write("en,fr\n")
        while size < megabytes * 2**20:
            sides = (" ".join(rng.choices(words, k=rng.randint(5, 20))) for _ in range(2))
            line = previous if previous and rng.random() < 0.02 else ",".join(sides) + "\n"
            f.write(line)
            size, rows, previous = size + len(line), rows + 1, line
    return rows


def measure(code: str, spec: str) -> dict:
    """Wall seconds and peak resident MB of ``code`` in a fresh Python (its own ``ru_maxrss``)."""
    start = time.perf_counter()
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    report = "; import resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    command = [sys.executable, "-c", code + report, spec]
    done = subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    peak_kb = int(done.stdout.split()[-1])
    return {"seconds": round(time.perf_counter() - start, 1), "peak_mb": round(peak_kb / 1024)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=100, help="size of the generated CSV (default: 100 MB)")
    parser.add_argument("--skip-in-memory", action="store_true", help="measure the streamed summary only")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)  # the --out folder, before any work
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pairs.csv"
        rows = write_csv(path, args.mb)
        spec = f"{path}?src=en&tgt=fr"
        result = {"file_mb": round(path.stat().st_size / 2**20, 1), "rows": rows, "python": sys.version.split()[0]}
        result["imports_only"] = measure(IMPORTS, spec)
        result["streamed"] = measure(STREAMED, spec)
        if not args.skip_in_memory:
            result["in_memory"] = measure(IN_MEMORY, spec)
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
