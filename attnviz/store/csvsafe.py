"""CSV safe to open in a spreadsheet: every CSV attnviz writes goes through :func:`csv_text`, so a
text cell that a spreadsheet would run as a formula is read as text, no two columns share a name (a
spreadsheet or ``pandas.read_csv`` would tell them apart by a guess, or drop one), and the text starts
with a byte order mark, without which Excel reads UTF-8 in the system's code page (Arabic, Chinese or
emoji tokens garbled); ``pandas.read_csv`` skips it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # spreadsheet formula injection
BOM = "\ufeff"  # UTF-8's byte order mark, which tells a spreadsheet the file is UTF-8


def safe_cell(text: str) -> str:
    """Text safe to open in a spreadsheet: one that would start a formula gets a leading quote
    (after leading spaces too: ``" =1"``, as some spreadsheets trim them)."""
    return "'" + text if text.lstrip(" ").startswith(_FORMULA_START) else text


def unique_names(names: list) -> list[str]:
    """``names`` as text, a name met again numbered from its second time on: ``the``, ``the (2)``;
    a numbered name never takes one that another column has."""
    taken = {str(n) for n in names}
    out: list[str] = []
    for name in map(str, names):
        unique, k = name, 1
        while unique in out or (k > 1 and unique in taken):
            k += 1
            unique = f"{name} ({k})"
        out.append(unique)
    return out


def csv_text(frame: pd.DataFrame, float_format: str | None = None) -> str:
    """``frame`` as CSV after :data:`BOM`, every text cell and column name passed through
    :func:`safe_cell` and the column names made unique (:func:`unique_names`)."""
    safe = frame.set_axis(unique_names([safe_cell(c) if isinstance(c, str) else c for c in frame.columns]), axis=1)
    safe = safe.apply(lambda col: col.map(lambda v: safe_cell(v) if isinstance(v, str) else v))
    return BOM + safe.to_csv(index=False, float_format=float_format)
