"""Pieces the command modules share: range-checked argparse types, ``--keep-unk``, ``--device``, a gold
file's ``--format`` and ``--base``, JSON output, and an HTML file written whole where it may be written."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from attnviz.cli.streams import UNPRINTABLE, writes_utf8
from attnviz.devices import DEVICES, check_device_name
from attnviz.errors import ConfigError, InputError, resolved
from attnviz.links import DIRECTIONAL, FORMATS, GoldFile
from attnviz.store import pretrained_dir, write_atomic


def _ranged(kind: type, lo: float, hi: float) -> Callable[[str], float]:
    """An argparse type: ``kind(text)`` within ``[lo, hi]``, else a clear usage error."""

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            noun = "whole number" if kind is int else "number"
            raise argparse.ArgumentTypeError(f"{text!r} is not a {noun}") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{value} is out of range [{lo}, {hi}]")
        return value

    return parse


def int_in(lo: int, hi: int) -> Callable[[str], int]:
    """An argparse type: a whole number in ``[lo, hi]``."""
    return _ranged(int, lo, hi)


def float_in(lo: float, hi: float) -> Callable[[str], float]:
    """An argparse type: a number in ``[lo, hi]``."""
    return _ranged(float, lo, hi)


def link_threshold(text: str) -> float:
    """An argparse type: a link threshold, a weight in ``(0, 1]``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{value} is out of range (0, 1]")
    return value


THRESHOLD_HELP = "for --method threshold (default 0.3)"


def add_directional_method(p: argparse.ArgumentParser) -> None:
    """``--method`` among the one-direction link readers, and ``--threshold``, for attention read from files."""
    p.add_argument(
        "--method",
        choices=DIRECTIONAL,
        default="argmax",
        help="word links: argmax per target word, every weight >= --threshold, or dtw (Whisper's monotonic path); "
        "default argmax",
    )
    p.add_argument("--threshold", type=link_threshold, default=0.3, help=THRESHOLD_HELP)


# help texts shared by the commands, so an option reads the same wherever it appears
MODEL_HELP = (
    "a model name (shipped or in the models folder; see `list`) or a .safetensors path inside those folders "
    "or the working directory"
)
BEAM_HELP = "beam width (default 1: greedy)"
DATA_SPEC = "a built-in task (see `list`), multi30k-de-en[@FOLDER], FILE?src=COL&tgt=COL or hf:NAME?src=COL&tgt=COL"


def add_keep_unk(p: argparse.ArgumentParser) -> None:
    """``--keep-unk`` of the commands that print translations."""
    p.add_argument(
        "--keep-unk",
        action="store_true",
        help="print <unk> as is (default: replace it by the source word attended to most)",
    )


def _device_name(text: str) -> str:
    """An argparse type: a device name :func:`attnviz.devices.pick_device` accepts (whether this
    machine has it is checked when the model loads)."""
    try:
        check_device_name(text)
    except ConfigError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def add_device(p: argparse.ArgumentParser, default: str = "cpu") -> None:
    """``--device`` of the commands that load a model: pass ``args.device`` to
    ``attnviz.store.load(name, device=...)``. A device this machine lacks is a one-line error
    (exit 2) when the model loads."""
    p.add_argument(
        "--device",
        type=_device_name,
        default=default,
        metavar="DEVICE",
        help=f"where the model runs: {', '.join(DEVICES)} (the first GPU, else the CPU); default {default}",
    )


def _base(text: str) -> int | str:
    if text == "auto":
        return text
    if text in ("0", "1"):
        return int(text)
    raise argparse.ArgumentTypeError(f"{text!r} is not an index base; give 0, 1 or auto")


def add_gold_convention(p: argparse.ArgumentParser) -> None:
    """``--format``, ``--base`` and ``--one-based``: how a gold alignment file is written (read them with
    :func:`gold_base` and ``args.format``)."""
    p.add_argument(
        "--format",
        choices=("auto", *FORMATS),
        default="auto",
        help="gold format: pharaoh (i-j, i?j, i-j-P), talp (i-j, ipj), naacl (sent i j [S|P]); default auto",
    )
    p.add_argument(
        "--base",
        type=_base,
        default="auto",
        metavar="{auto,0,1}",
        help="what the gold file numbers the first word: 0, 1 or auto (detected from the sentence lengths); "
        "default auto",
    )
    p.add_argument("--one-based", action="store_true", help="the same as --base 1")


def gold_base(args: argparse.Namespace) -> int | str:
    """The index base the options of :func:`add_gold_convention` ask for."""
    if args.one_based:
        if args.base not in ("auto", 1):
            raise InputError("--one-based is --base 1; give one of them")
        return 1
    return args.base


def gold_summary(path: str, gold: GoldFile) -> dict:
    """How a gold file was read, for ``--json``: the file, format, base, how the base was chosen,
    the links to the NULL word dropped and the warnings."""
    read = {"format": gold.format, "base": gold.base, "how": gold.how, "null_links": gold.null_links}
    return {"file": str(path), **read, "warnings": gold.warnings}


def gold_line(path: str, gold: GoldFile, width: int = 0) -> str:
    """The line every command that reads a gold file prints: ``gold: FILE: how it was read``
    (the key right-aligned in ``width`` characters)."""
    return f"{'gold':>{width}}: {path}: {gold.convention()}"


SCORE_KEYS = {"F1": "f1", "AER": "aer", "links": "predicted", "sure links": "sure"}


def score_json(row: dict) -> dict:
    """A score row (:func:`attnviz.links.score_table`'s, a table's column names) under the keys every
    command's JSON gives those numbers: ``precision``, ``recall``, ``f1``, ``aer``, ``predicted`` (links
    predicted), ``sure`` (sure gold links), as ``align-eval --json`` writes them."""
    return {SCORE_KEYS.get(key, key): value for key, value in row.items()}


def print_json(obj: object, file: TextIO | None = None, indent: int | None = None) -> None:
    """JSON on ``file`` (stdout by default): one line, or indented by ``indent``; non-ASCII as is on a
    UTF-8 stream, else as ``\\uXXXX`` escapes; NaN an error, not invalid JSON. Every command writes
    its JSON through here."""
    file = file or sys.stdout
    print(json.dumps(obj, ensure_ascii=not writes_utf8(file), allow_nan=False, indent=indent), file=file)


def printable(name: str) -> str:
    """A name from the file system as a terminal table can show it: a control or direction character
    (a newline, U+202E) or a blank name written as a Python string literal, escaped."""
    return ascii(name) if not name.strip() or UNPRINTABLE.search(name) else name


def write_out(out: Path, text: str, force: bool) -> None:
    """A command's ``--out`` file written whole; without ``force`` a file that appeared there while the
    command ran (another run) is kept, not overwritten."""
    try:
        write_atomic(out, text, replace=force)
    except FileExistsError:
        raise ConfigError(
            f"{out} appeared while this ran; add --force to overwrite it, or choose another --out"
        ) from None


def check_html_out(path: str | Path, force: bool = False) -> Path:
    """Refuse an HTML destination (a report, an animation) before any work: not ``.html``, inside
    ``pretrained/``, a folder, a missing folder, or an existing file without ``force``."""
    path = Path(path).expanduser()
    if path.suffix.lower() not in (".html", ".htm"):
        raise InputError(f"--out is an HTML file; name it {path.stem}.html, not {path.name!r}")
    if resolved(path, "--out").is_relative_to(resolved(pretrained_dir())):
        raise ConfigError(f"{path} is inside {pretrained_dir()}, the shipped models; write the file elsewhere")
    if path.is_dir():
        raise InputError(f"{path} is a folder; give a file name ending in .html")
    if not resolved(path.parent, "--out").is_dir():
        if path.parent.exists():
            raise InputError(f"{path.parent} is a file, not a folder; choose another --out")
        raise InputError(f"the folder {path.parent} does not exist; create it or choose another --out")
    if not os.access(path.parent, os.W_OK):
        raise ConfigError(f"the folder {path.parent} is not writable; choose another --out")
    if (path.exists() or path.is_symlink()) and not force:
        raise ConfigError(f"{path} already exists; add --force to overwrite it, or choose another --out")
    return path
