"""When does alignment form? The step at which each toy-task model's probe AER first falls below a
threshold, Bahdanau against Luong, from the alignment histories of models trained with it.

Run from the repository root::

    python benchmarks/alignment_formation.py                       # the shipped toy-task models
    OMP_NUM_THREADS=1 python benchmarks/alignment_formation.py --train runs/formation   # train them first

Every toy-task recipe (``pretrained/recipes/{dates,toy-fr}-*.json``: each score in both decoder
styles) is trained with its alignment history (``--train DIR`` trains the missing ones into DIR, one
at a time, with the recipe's seed; the shipped models were built from the same recipes). A history
records the AER of four gold test pairs forced through their references at the start, at steps
1, 2, 3, 4, 6, 8, 12, ... and at every epoch end, so a step in the table is the first *recorded*
point below the threshold: the alignment formed after the point before it (``after``) and by that
step. The entropy is the mean attention entropy (nats) of the probes at that point. Writes
``benchmarks/results/alignment_formation.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from attnviz.errors import CheckpointError
from attnviz.store import read_header, read_history
from attnviz.training import Recipe, run_recipe

ROOT = Path(__file__).resolve().parent.parent
TASKS = ("toy-fr", "dates")
STYLES = ("bahdanau", "luong")
RESULTS = ROOT / "benchmarks" / "results"


def recipes() -> list[Path]:
    return sorted(p for task in TASKS for p in (ROOT / "pretrained" / "recipes").glob(f"{task}-*.json"))


def train_missing(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for path in recipes():
        out = folder / f"{path.stem}.safetensors"
        if out.is_file() and read_header(out).get("meta", {}).get("metrics"):
            continue
        start = time.perf_counter()
        run_recipe(Recipe.from_file(path), out, resume=True)
        print(f"trained {path.stem} in {time.perf_counter() - start:.0f} s", flush=True)


def formation(history: dict, threshold: float) -> dict:
    """The first recorded point whose AER is below ``threshold``, the point before it, and the end."""
    points = [p for p in history["points"] if p.get("aer") is not None]
    first = next((k for k, p in enumerate(points) if p["aer"] < threshold), None)
    last = points[-1]
    row = {"final_aer": last["aer"], "final_entropy": last["entropy"], "final_step": last["step"]}
    if first is None:
        return {**row, "step": None, "after": None, "epochs": None, "entropy": None}
    hit = points[first]
    return {
        **row,
        "step": hit["step"],
        "after": points[first - 1]["step"] if first else None,
        "epochs": hit["epochs"],
        "entropy": hit["entropy"],
    }


def first_below(bahdanau: int | None, luong: int | None) -> str:
    """Which decoder's probes fell below the threshold first, from the steps they did (None: never)."""
    if bahdanau is None and luong is None:
        return "neither"
    if bahdanau == luong:
        return "tie"
    return "bahdanau" if luong is None or (bahdanau is not None and bahdanau < luong) else "luong"


def table(folder: Path, thresholds: list[float]) -> tuple[list[dict], list[str]]:
    rows, missing = [], []
    for path in recipes():
        if not path.stem.endswith("-bahdanau"):
            continue
        base = path.stem.removesuffix("-bahdanau")
        task = next(t for t in TASKS if base.startswith(f"{t}-"))
        histories = {}
        for style in STYLES:
            file = folder / f"{base}-{style}.safetensors"
            try:
                histories[style] = read_history(file) if file.is_file() else None
            except CheckpointError:
                histories[style] = None
            if histories[style] is None:
                missing.append(f"{base}-{style}")
        if any(h is None for h in histories.values()):
            continue
        for threshold in thresholds:
            row = {"task": task, "score": base.removeprefix(f"{task}-"), "threshold": threshold}
            for style, history in histories.items():
                row[style] = formation(history, threshold)
            b, lu = row["bahdanau"]["step"], row["luong"]["step"]
            row["first"] = first_below(b, lu)
            rows.append(row)
    return rows, missing


def _cell(f: dict) -> str:
    if f["step"] is None:
        return f"not reached (final AER {f['final_aer']:.2f})"
    after = f" (after {f['after']:,})" if f["after"] is not None else ""
    return f"{f['step']:,}{after}, epoch {f['epochs']:.2f}, H {f['entropy']:.2f}"


def markdown(rows: list[dict], command: str) -> str:
    lines = [f"Command: `{command}`", ""]
    for threshold in sorted({r["threshold"] for r in rows}, reverse=True):
        lines += [
            f"AER of the probes first below {threshold}: step (previous recorded step), fractional epoch and"
            " entropy H (nats) at that point; final AER after training.",
            "",
            "| task | score | Bahdanau | Luong | first | final AER B / L |",
            "|---|---|---|---|---|---|",
        ]
        at = [r for r in rows if r["threshold"] == threshold]
        for r in at:
            b, lu = r["bahdanau"], r["luong"]
            lines.append(
                f"| {r['task']} | {r['score']} | {_cell(b)} | {_cell(lu)} | {r['first']} | "
                f"{b['final_aer']:.2f} / {lu['final_aer']:.2f} |"
            )
        counts = {k: sum(r["first"] == k for r in at) for k in ("bahdanau", "luong", "tie", "neither")}
        lines += ["", "First below the threshold: " + ", ".join(f"{k} {v}" for k, v in counts.items()) + ".", ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", type=Path, help="train the missing toy-task recipes into this folder and read it")
    parser.add_argument("--models", type=Path, default=ROOT / "pretrained", help="read the models from this folder")
    parser.add_argument("--thresholds", type=float, nargs="+", default=[0.5, 0.3])
    parser.add_argument("--out", type=Path, default=RESULTS / "alignment_formation")
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)  # the --out folder, before any work
    folder = args.models
    if args.train:
        train_missing(args.train)
        folder = args.train
    rows, missing = table(folder, args.thresholds)
    command = "python benchmarks/alignment_formation.py" + (f" --train {args.train}" if args.train else "")
    where = folder.resolve()  # relative to the repository where it is inside it, so the JSON names no machine
    where = where.relative_to(ROOT) if where.is_relative_to(ROOT) else where
    record = {"models": str(where), "thresholds": args.thresholds, "missing": missing, "rows": rows}
    args.out.with_suffix(".json").write_text(json.dumps(record, indent=2) + "\n")
    text = markdown(rows, command)
    if missing:
        text += f"\nNot in the table (no checkpoint with an alignment history in the folder): {', '.join(missing)}.\n"
    args.out.with_suffix(".md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
