"""Rebuild the shipped models from their recipes, then the manifest.

    python pretrained/build.py                 # every recipe whose checkpoint is missing
    python pretrained/build.py dates-dot-luong # just these (retrained even if present)
    python pretrained/build.py --shard 0/2     # every second missing recipe: one half on each of two machines
    python pretrained/build.py --manifest      # only rewrite manifest.json from the checkpoints
    python pretrained/build.py --remeasure multi30k-de-en-additive-bahdanau  # new metrics, same weights
    attnviz leaderboard --write docs/models.md # then the table in docs/models.md from the manifest

Each model is trained with its recipe's seed, evaluated on its test split, and saved
atomically (also after every epoch); a checkpoint without metrics counts as unfinished, and an
interrupted build resumes from its last saved epoch.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from attnviz.errors import CheckpointError  # noqa: E402
from attnviz.evaluation.shipped import check_metrics  # noqa: E402
from attnviz.store import read_header, recipe_path  # noqa: E402
from attnviz.store.catalog import write_manifest  # noqa: E402
from attnviz.training.recipes import Recipe, remeasure, run_recipe  # noqa: E402


def _finished(path: Path) -> bool:
    """Built and measured: a checkpoint saved after an epoch but before evaluation has no metrics."""
    try:
        return bool(read_header(path).get("meta", {}).get("metrics"))
    except CheckpointError:
        return False


def _log_epoch(p) -> None:
    if p.kind == "epoch":
        valid = f"valid {p.valid_loss or 0:.3f} acc {p.valid_accuracy or 0:.3f}"
        print(f"  epoch {p.epoch}/{p.epochs} step {p.step} loss {p.loss:.3f} {valid} {p.seconds:.0f} s", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="recipe names (default: every missing one)")
    parser.add_argument("--manifest", action="store_true", help="only rewrite manifest.json")
    parser.add_argument(
        "--remeasure", action="store_true", help="re-evaluate the named models (no training), then the manifest"
    )
    parser.add_argument("--shard", default="0/1", help="K/N: build every N-th missing recipe starting at K")
    args = parser.parse_args()
    if args.remeasure:
        for name in args.names:
            start = time.perf_counter()
            metrics = remeasure(Recipe.from_file(recipe_path(name)), HERE / f"{name}.safetensors")
            print(f"{name}: {metrics} in {time.perf_counter() - start:.0f} s", flush=True)
    elif not args.manifest:
        recipes = sorted((HERE / "recipes").glob("*.json"))
        if args.names:
            recipes = [recipe_path(n) for n in args.names]
        else:
            recipes = [r for r in recipes if not _finished(HERE / f"{r.stem}.safetensors")]
            k, n = (int(x) for x in args.shard.split("/"))
            recipes = recipes[k::n]
        for path in recipes:
            recipe = Recipe.from_file(path)
            start = time.perf_counter()
            model = run_recipe(recipe, HERE / f"{recipe.name}.safetensors", callback=_log_epoch, resume=True)
            print(f"{recipe.name}: {model.meta.get('metrics')} in {time.perf_counter() - start:.0f} s", flush=True)
    for entry in write_manifest(HERE, check=check_metrics):
        print(f"{entry['name']:<32} {entry['metrics']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
