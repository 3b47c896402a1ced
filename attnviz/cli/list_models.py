"""``attnviz list``: the score functions, the tasks and the models (shipped and trained)."""

from __future__ import annotations

import argparse
import sys

from attnviz.cli.options import print_json, printable
from attnviz.data import TASKS
from attnviz.model import SCORES, STYLES
from attnviz.store import absent_hint, absent_models, list_models

HELP = "score functions, tasks and models"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``attnviz list``."""
    p.add_argument(
        "--json", action="store_true", help="print the score functions, styles, tasks and models as one JSON object"
    )


def run(args: argparse.Namespace) -> int:
    models = list_models()
    if hint := absent_hint(absent_models()):
        print(f"attnviz list: note: {hint}", file=sys.stderr)
    if args.json:
        listed = [m.to_dict() for m in models]
        print_json({"scores": sorted(SCORES), "styles": list(STYLES), "tasks": TASKS, "models": listed})
        return 0
    print("score functions:", ", ".join(sorted(SCORES)))
    print("tasks:", ", ".join(TASKS))
    for m in models:
        print(f"{printable(m.name):<32} {printable(m.task or '?'):<16} {m.score:<10} {m.style:<9} {m.status}")
    if not models:
        print("no models yet: train one with `python -m attnviz train --data dates --out models/dates.safetensors`")
    return 0
