"""``attnviz replay``: a model's alignment history, as a table of its points, as JSON, or as an
HTML animation that plays offline (two models, e.g. Bahdanau and Luong, on one axis)."""

from __future__ import annotations

import argparse

from attnviz.cli.options import MODEL_HELP, check_html_out, int_in, print_json, write_out
from attnviz.errors import InputError
from attnviz.store import load, model_roots

HELP = "replay how a model's attention formed while it trained (its alignment history)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``attnviz replay``."""
    p.add_argument("models", nargs="+", metavar="MODEL", help=MODEL_HELP + "; two or more play side by side")
    p.add_argument(
        "--out", metavar="FILE.html", help="write the animation (one self-contained HTML file) here; not in pretrained/"
    )
    p.add_argument("--force", action="store_true", help="overwrite --out if it exists or appears while this runs")
    p.add_argument("--axis", choices=["step", "epochs"], default="step", help="progress axis (default step)")
    p.add_argument("--probe", type=int_in(0, 10_000), default=0, help="which probe pair to show (0-based; default 0)")
    p.add_argument(
        "--json", action="store_true", help="print the histories as JSON (points and probes); not with --out"
    )


def run(args: argparse.Namespace) -> int:
    from attnviz.plots import point_label, replay_figure, replay_html

    if args.json and args.out:
        raise InputError("--json prints the histories and --out writes the animation: give one of them")
    out = check_html_out(args.out, args.force) if args.out else None  # refused before any model is read
    histories = {}
    for name in args.models:
        history = load(name, roots=model_roots(include_cwd=True)).history
        if history is None:
            raise InputError(f"{name} was trained without an alignment history; retrain it (attnviz train) to get one")
        histories[name] = history.to_dict()
    if args.json:
        print_json(histories)
        return 0
    if out is not None:
        fig = replay_figure(histories, probe=args.probe, axis=args.axis)
        write_out(out, replay_html(fig, f"attnviz: {', '.join(histories)}"), args.force)
        print(f"wrote {out} ({len(fig.frames)} frames)")
        return 0
    for name, history in histories.items():
        probes = history["probes"]
        print(f"{name}: {len(history['points'])} points, {len(probes)} probes")
        for point in history["points"]:
            print("  " + point_label(point))
    return 0
