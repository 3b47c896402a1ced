"""CSV safe to open in a spreadsheet: every CSV attnviz writes goes through :func:`csv_text`, so a
text cell that a spreadsheet would run as a formula is read as text."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # spreadsheet formula injection


def safe_cell(text: str) -> str:
    """Text safe to open in a spreadsheet: one that would start a formula gets a leading quote
    (after leading spaces too: ``" =1"``, as some spreadsheets trim them)."""
    return "'" + text if text.lstrip(" ").startswith(_FORMULA_START) else text


def csv_text(frame: pd.DataFrame, float_format: str | None = None) -> str:
    """``frame`` as CSV with every text cell and column name passed through :func:`safe_cell`."""
    safe = frame.rename(columns=lambda c: safe_cell(c) if isinstance(c, str) else c)
    safe = safe.apply(lambda col: col.map(lambda v: safe_cell(v) if isinstance(v, str) else v))
    return safe.to_csv(index=False, float_format=float_format)
