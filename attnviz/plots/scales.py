"""One scale for the figures of one kind drawn side by side (Explore's Both: Bahdanau's and Luong's).

Each builder scales its figure to its own data; :func:`share_scales` then gives the figures of
one kind common colour ranges (the k-th colour scale of every figure: a heatmap's
``zmin``/``zmax``, a colour-scaled marker's ``cmin``/``cmax``) and one range for each value
axis named, so that one colour or one height means one number in every figure::

    figs = share_scales([step_bar(a, t), step_bar(b, t)], axes=("yaxis", "yaxis2"))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import plotly.graph_objects as go

from attnviz.errors import InputError

PAD = 0.05  # a range read from the data is widened by this fraction each side, as Plotly's autorange does

Range = tuple[float, float]


def _finite(values: object) -> np.ndarray:
    """The finite numbers of ``values`` (nested sequences, ``None`` and ±inf allowed), flat."""
    if values is None:
        return np.zeros(0)
    try:
        a = np.asarray(values, dtype=np.float64).ravel()
    except (TypeError, ValueError):  # colour names, category labels: no numeric scale
        return np.zeros(0)
    return a[np.isfinite(a)]


def _colour_scales(fig: go.Figure) -> list[tuple[object, str]]:
    """Every colour scale of ``fig`` in trace order: ``(holder, prefix)`` with the holder's data
    in ``z`` (a heatmap, prefix ``"z"``) or ``color`` (a marker with a colour bar, prefix ``"c"``)."""
    scales = []
    for trace in fig.data:
        if trace.type in ("heatmap", "contour"):
            scales.append((trace, "z"))
        elif trace.type == "scatter" and trace.marker.showscale and _finite(trace.marker.color).size:
            scales.append((trace.marker, "c"))
    return scales


def _colour_range(holder: go.Heatmap | go.Contour | go.scatter.Marker, prefix: str) -> Range | None:
    """The range a colour scale spans now: its set bounds, else its data's (symmetric around its mid)."""
    data = _finite(holder.z if prefix == "z" else holder.color)
    lo, hi, mid = (holder[prefix + part] for part in ("min", "max", "mid"))
    if not data.size and (lo is None or hi is None):
        return None
    if lo is None and hi is None and mid is not None:  # Plotly centres such a scale on its mid
        m = float(np.abs(data - mid).max())
        return mid - m, mid + m
    return (float(data.min()) if lo is None else lo), (float(data.max()) if hi is None else hi)


def _axis_traces(fig: go.Figure, axis: str) -> Iterable:
    """The traces (of the figure and of its animation frames) drawn against layout axis ``axis``."""
    letter, ref = axis[0], axis.replace("axis", "")  # "yaxis2" -> "y", "y2"
    for trace in [*fig.data, *(t for frame in fig.frames or () for t in frame.data)]:
        if (trace[letter + "axis"] or letter) == ref:
            yield trace


def _axis_range(fig: go.Figure, axis: str) -> Range | None:
    """The range value axis ``axis`` shows now: the one set, else its data's with Plotly's padding
    (bars start at 0)."""
    if fig.layout[axis].range is not None:
        lo, hi = fig.layout[axis].range
        return float(lo), float(hi)
    letter = axis[0]
    parts = [_finite(t[letter]) for t in _axis_traces(fig, axis)]
    parts += [np.zeros(1) for t in _axis_traces(fig, axis) if t.type == "bar"]
    data = np.concatenate(parts) if parts else np.zeros(0)
    if not data.size:
        return None
    lo, hi = float(data.min()), float(data.max())
    pad = (hi - lo) * PAD or 0.5
    return lo - pad, hi + pad


def _union(ranges: list[Range | None]) -> Range | None:
    known = [r for r in ranges if r is not None]
    if not known:
        return None
    return min(min(r) for r in known), max(max(r) for r in known)


def share_scales(figs: Sequence[go.Figure], axes: Iterable[str] = ()) -> list[go.Figure]:
    """Put figures of one kind on common scales, in place, and return them: the k-th colour scale
    of every figure spans the union of theirs (``zmin``/``zmax`` of heatmaps, ``cmin``/``cmax``
    of markers with a colour bar), and every layout axis in ``axes`` (value axes such as
    ``"yaxis"``, ``"yaxis2"``; never category axes, whose positions are tokens) the union of
    their ranges. A reversed axis stays reversed."""
    figs = list(figs)
    scales = [_colour_scales(f) for f in figs]
    if len({len(s) for s in scales}) > 1:
        raise InputError(
            f"figures of one kind have {sorted({len(s) for s in scales})} colour scales; share scales only "
            "between figures built by the same function"
        )
    for k in range(len(scales[0]) if scales else 0):
        shared = _union([_colour_range(holder, prefix) for holder, prefix in (s[k] for s in scales)])
        if shared is not None:
            for holder, prefix in (s[k] for s in scales):
                holder.update({prefix + "min": shared[0], prefix + "max": shared[1], prefix + "mid": None})
    for axis in axes:
        if not axis.startswith(("xaxis", "yaxis")):
            raise InputError(f"{axis!r} is not a layout axis; name one like 'yaxis' or 'yaxis2'")
        ranges = [_axis_range(f, axis) for f in figs]
        shared = _union(ranges)
        if shared is None:
            continue
        for fig, own in zip(figs, ranges, strict=True):
            flip = own is not None and own[0] > own[1]
            fig.layout[axis].update(range=list(shared[::-1] if flip else shared), autorange=False)
    return figs
