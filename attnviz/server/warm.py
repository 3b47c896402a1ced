"""Warm-up at server start: what the first visitor of a fresh server would otherwise wait for."""

from __future__ import annotations

from attnviz.plots import alignment_heatmap
from attnviz.store import ModelEntry, front_entry, front_example, list_models, load, task_of


def front_page() -> ModelEntry | None:
    """Load the front model (:func:`attnviz.store.front_entry`) and draw its example once: the first
    decode initialises torch's kernels and the first figure Plotly's validators. Returns the entry
    it warmed (None when nothing is shipped)."""
    models = list_models()
    entry = front_entry(models)
    example = entry and front_example(models, task_of(entry))
    if not example:
        return entry
    translator = load(entry.path)
    alignment_heatmap(translator.translate(example)).to_json()
    return entry
