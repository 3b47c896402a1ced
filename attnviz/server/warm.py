"""Warm-up at server start: what the first visitor of a fresh server would otherwise wait for."""

from __future__ import annotations

from collections.abc import Callable

from attnviz.decoding import Alignment
from attnviz.plots import alignment_heatmap
from attnviz.store import ModelEntry, front_entry, front_example, list_models, load, task_of


def front_page(decode: Callable[[ModelEntry, str], Alignment] | None = None) -> ModelEntry | None:
    """Load the front model (:func:`attnviz.store.front_entry`) and draw its example once: the first
    decode initialises torch's kernels and the first figure Plotly's validators. ``decode(entry,
    text)`` decodes it (the app passes its cached decode, so that its first visitor's page finds
    model and decode in its caches); by default the model is loaded here. Returns the entry it
    warmed (None when nothing is shipped)."""
    models = list_models()
    entry = front_entry(models)
    example = entry and front_example(models, task_of(entry))
    if not example:
        return entry
    al = decode(entry, example) if decode else load(entry.path).translate(example)
    alignment_heatmap(al).to_json()
    return entry
