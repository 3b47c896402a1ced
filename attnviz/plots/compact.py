"""Figures' numbers in as few bytes as they need on their way to the browser.

Plotly sends a trace's numpy arrays as typed binary data (``bdata``) of the array's own dtype. The
model's weights, scores and context vectors are float32, but the figures receive them widened to
float64 (``Alignment.matrix``, the hover's ``customdata``): eight bytes a cell where four hold the
same number. :func:`compact_arrays` narrows them back where that changes no value, so the browser
draws and hovers exactly the same numbers (colours, ``%{z:.3f}``).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

ARRAYS = ("z", "customdata", "x", "y")  # the trace properties that may hold a matrix or a long vector


def exact_float32(value: object) -> np.ndarray | None:
    """``value`` as float32 when it is a float64 array that float32 holds exactly (NaN and ±∞
    included); ``None`` otherwise (another type, or a value float32 would change)."""
    if not isinstance(value, np.ndarray) or value.dtype != np.float64:
        return None
    narrow = value.astype(np.float32)
    return narrow if np.array_equal(narrow.astype(np.float64), value, equal_nan=True) else None


def compact_arrays(fig: go.Figure) -> go.Figure:
    """Narrow each trace's float64 arrays (:data:`ARRAYS`) to float32 where that is exact, in place:
    half the bytes for the same numbers. Arrays float32 would change (a difference of two maps,
    computed in float64) stay float64."""
    for trace in fig.data:
        for name in ARRAYS:
            narrow = exact_float32(trace[name]) if name in trace else None
            if narrow is not None:
                trace[name] = None  # Plotly ignores a new value equal to the old one
                trace[name] = narrow
    return fig
