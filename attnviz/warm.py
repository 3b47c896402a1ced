"""Warm-up at server start: what the first visitor of a fresh server would otherwise wait for."""

from __future__ import annotations

from attnviz import catalog, plots, siblings


def front_entry(models: list[dict]) -> dict | None:
    """The model the app opens on: the first task's default score, in its default style."""
    found = siblings.tasks(models)
    if not found:
        return None
    task = found[0]
    score = siblings.default_score(models, task)
    return siblings.slots(models, task)[score, siblings.default_style(models, task, score)].entry if score else None


def front_page() -> dict | None:
    """Load the front model and draw its example once: the first model load imports torch's
    meta-device machinery (about 1 s), the first decode initialises torch's kernels and the first
    figure Plotly's validators. Returns the entry it warmed (None when nothing is shipped)."""
    entry = front_entry(catalog.list_models())
    if entry is None or not entry.get("example"):
        return entry
    translator = catalog.load(entry["path"])
    plots.alignment_heatmap(translator.translate(entry["example"])).to_json()
    return entry
