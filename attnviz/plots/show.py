"""The notebook's front door: one call per view, each returning a Plotly figure, which Jupyter
draws when it is a cell's last expression (or with ``fig.show()``); ``fig.write_html``,
``fig.write_image`` (with kaleido) save it. ``attnviz.show``, ``attnviz.show_both`` and
``attnviz.show_steps`` are these functions::

    import attnviz
    luong = attnviz.load("toy-fr-general-luong")
    al = luong.translate("the black cat eats the apple .")
    attnviz.show(al)                                  # the weights heatmap, with hover
    attnviz.show_both(bahdanau_al, al)                # Bahdanau | Luong side by side, one colour scale
    attnviz.show_steps(al)                            # every decoder step, with a play button and a slider
"""

from __future__ import annotations

import plotly.graph_objects as go

from attnviz.decoding import Alignment
from attnviz.errors import InputError
from attnviz.links import for_reading
from attnviz.plots.compare import compare_heatmaps
from attnviz.plots.explore import explore_heatmap, step_animation

VALUES = ("weights", "scores")


def _read(al: Alignment, hide_eos: bool, merge: bool) -> tuple[Alignment, str]:
    if not isinstance(al, Alignment):
        raise InputError(f"pass an Alignment (what Translator.translate or .align returns), not {type(al).__name__}")
    shown = for_reading(al, hide_eos, merge)
    return shown.alignment, shown.note


def _check_values(values: str) -> None:
    if values not in VALUES:
        raise InputError(f"values must be one of {', '.join(VALUES)}; got {values!r}")


def show(
    al: Alignment, values: str = "weights", title: str | None = None, hide_eos: bool = False, merge: bool = False
) -> go.Figure:
    """The attention of one decode as a heatmap: target tokens as rows, source tokens as columns,
    each cell's hover naming both tokens with its weight and raw score. ``values``: "weights"
    (the softmax) or "scores" (the raw energies). ``hide_eos`` drops the source's ``<eos>`` column
    and rescales each row to sum to 1; ``merge`` joins subword pieces into words (a model with BPE);
    the title says when either is on."""
    _check_values(values)
    shown, note = _read(al, hide_eos, merge)
    text = "; ".join(part for part in (title, note) if part) or None
    return explore_heatmap(shown, values, title=text)


def show_both(
    first: Alignment,
    second: Alignment,
    names: tuple[str, str] = ("Bahdanau", "Luong"),
    values: str = "weights",
    hide_eos: bool = False,
    merge: bool = False,
) -> go.Figure:
    """Two decodes side by side on one colour scale with one colour bar, each titled by its name:
    the app's Both view. ``attnviz.plots.difference_heatmap`` maps their difference when both
    have the same target (``Translator.align`` forces one)."""
    _check_values(values)
    if len(names) != 2 or names[0] == names[1]:
        raise InputError(f"names must be two different labels, one per alignment; got {names!r}")
    panels = {name: _read(al, hide_eos, merge)[0] for name, al in zip(names, (first, second), strict=True)}
    return compare_heatmaps(panels, values)


def show_steps(al: Alignment, frame_ms: int = 700) -> go.Figure:
    """Every decoder step of one decode: the step's softmax weights over the source (and a local
    window around p_t) above its context vector c_t, with a play button and a step slider that run
    in the notebook, without Python."""
    return step_animation(_read(al, False, False)[0], frame_ms=frame_ms)
