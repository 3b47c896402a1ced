"""Pieces the command modules share: range-checked argparse types, ``--keep-unk``, JSON output."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable


def _ranged(kind: type, lo: float, hi: float) -> Callable[[str], float]:
    """An argparse type: ``kind(text)`` within ``[lo, hi]``, else a clear usage error."""

    def parse(text: str):
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


def add_keep_unk(p: argparse.ArgumentParser) -> None:
    """``--keep-unk`` of the commands that print translations."""
    p.add_argument("--keep-unk", action="store_true",
                   help="print <unk> as is (default: replace it by the source word attended to most)")  # fmt: skip


def print_json(obj) -> None:
    """One line of JSON on stdout (non-ASCII as is; NaN is an error, not invalid JSON)."""
    print(json.dumps(obj, ensure_ascii=False, allow_nan=False))
