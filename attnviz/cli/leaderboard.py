"""``attnviz leaderboard``: the shipped models' metrics as a Markdown table, from the manifest."""

from __future__ import annotations

import argparse
from pathlib import Path

from attnviz.cli.options import print_json
from attnviz.errors import ConfigError
from attnviz.store import pretrained_dir, read_manifest

HELP = "the shipped models' metrics as a table (from the manifest)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``attnviz leaderboard``."""
    p.add_argument("--write", metavar="FILE.md", help="put the table between the leaderboard markers of FILE.md")
    p.add_argument("--json", action="store_true", help="print the manifest's entries as JSON instead of the table")


def run(args: argparse.Namespace) -> int:
    from attnviz.evaluation import leaderboard_markdown, write_table

    manifest = pretrained_dir() / "manifest.json"
    if not manifest.is_file():  # not "no models": a table of none would replace the one in --write's file
        raise ConfigError(
            f"{manifest} does not exist: the leaderboard is the shipped models' manifest; restore "
            "pretrained/manifest.json from git, or point ATTNVIZ_PRETRAINED at a folder that holds one"
        )
    if args.write:
        changed = write_table(Path(args.write))
        print(f"{args.write} updated" if changed else f"{args.write} already up to date")
    elif args.json:
        print_json(read_manifest())
    else:
        print(leaderboard_markdown())
    return 0
