"""Warm-up at server start: what the first visitor of a fresh server would otherwise wait for."""

from __future__ import annotations

from attnviz.plots import alignment_heatmap
from attnviz.server import siblings
from attnviz.store import list_models, load


def front_page() -> dict | None:
    """Load the front model (``siblings.front_entry``) and draw its example once: the first decode
    initialises torch's kernels and the first figure Plotly's validators. Returns the entry it
    warmed (None when nothing is shipped)."""
    models = list_models()
    entry = siblings.front_entry(models)
    example = entry and siblings.front_example(models, siblings.task_of(entry))
    if not example:
        return entry
    translator = load(entry["path"])
    alignment_heatmap(translator.translate(example)).to_json()
    return entry
