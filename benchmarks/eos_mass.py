"""Attention parked on ``<eos>``: every shipped Multi30k model's mean weight on the source ``<eos>``
column, S-align's measure (Chen et al. 2020), with the issue's goals beside it.

Each model is forced through the references of the first ``--n`` test pairs of its own data
(test_2016_flickr); over the rows of the target words (the final ``<eos>`` row left out) the mean
weight on the source ``<eos>`` column and the mean row entropy in nats
(``benchmarks.guided_compare.attention_shape``). Goals: at most 0.10 for a guided twin, at most
0.20 for a plain model.

    OMP_NUM_THREADS=1 python benchmarks/eos_mass.py --out benchmarks/results/eos_mass.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from attnviz.evaluation.evaluate import own_pairs  # noqa: E402
from attnviz.store import load_checkpoint, pretrained_dir, read_manifest  # noqa: E402
from benchmarks.guided_compare import attention_shape  # noqa: E402

GOALS = {"guided": 0.10, "plain": 0.20}


def measure(name: str, n: int) -> dict:
    """One model's row: its kind, ``<eos>`` mass, entropy and whether it meets its goal."""
    model = load_checkpoint(pretrained_dir() / f"{name}.safetensors")
    kind = "guided" if model.meta.get("guided") else "plain"
    shape = attention_shape(model, own_pairs(model, n=n))
    return {"model": name, "kind": kind, **shape, "goal": GOALS[kind], "met": shape["eos_mass"] <= GOALS[kind]}


def table(rows: list[dict]) -> str:
    lines = ["| model | kind | mass on `<eos>` | goal | met | entropy (nats) |", "|---|---|---:|---:|---|---:|"]
    for r in rows:
        met = "yes" if r["met"] else "**no**"
        lines.append(
            f"| {r['model']} | {r['kind']} | {r['eos_mass']:.3f} | {r['goal']:.2f} | {met} | {r['entropy']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", help="model names (default: every shipped Multi30k model)")
    parser.add_argument("--n", type=int, default=100, help="test pairs forced per model (default 100)")
    parser.add_argument("--out", type=Path, help="write the rows as JSON here, and the table beside it as .md")
    args = parser.parse_args()
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)  # the --out folder, before any work
    names = args.models or sorted(e["name"] for e in read_manifest() if e["name"].startswith("multi30k-"))
    rows = []
    for name in names:
        start = time.perf_counter()
        rows.append(measure(name, args.n))
        r, seconds = rows[-1], time.perf_counter() - start
        shape = f"eos {r['eos_mass']:.4f} entropy {r['entropy']:.3f}"
        print(f"{name:<44} {r['kind']:<6} {shape} ({seconds:.0f} s)", flush=True)
    if args.out:
        summary = {"pairs": args.n, "split": "test", "goals": GOALS, "rows": rows}
        args.out.write_text(json.dumps(summary, indent=2) + "\n")
        args.out.with_suffix(".md").write_text(table(rows))
    print(table(rows))


if __name__ == "__main__":
    main()
