"""docs/notebook.ipynb runs from top to bottom in a fresh Jupyter kernel, offline, and each of its
three ``attnviz.show`` cells displays a Plotly figure: the heatmap, both decoders side by side and
the per-step animation."""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "docs" / "notebook.ipynb"
PLOTLY = "application/vnd.plotly.v1+json"


def test_the_example_notebook_runs_offline_and_shows_the_three_figures(monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    # raises CellExecutionError, naming the cell, on any error
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert not [o for cell in code for o in cell.outputs if o.output_type == "error"]
    assert code[0].outputs[-1]["data"]["text/plain"] == "'le chat noir mange la pomme.'"
    figures = {}
    for cell in code[1:]:
        [shown] = [o for o in cell.outputs if PLOTLY in o.get("data", {})]
        figures[cell.source.splitlines()[0].split("(")[0]] = shown["data"][PLOTLY]
    assert list(figures) == ["attnviz.show", "attnviz.show_both", "attnviz.show_steps"]
    heatmap = figures["attnviz.show"]["data"][0]
    assert heatmap["type"] == "heatmap" and rows(heatmap["z"]) == 8  # "le chat noir mange la pomme . <eos>"
    both = [t for t in figures["attnviz.show_both"]["data"] if t["type"] == "heatmap"]
    assert len(both) == 2 and {t["zmax"] for t in both} == {both[0]["zmax"]}  # one colour scale
    steps = figures["attnviz.show_steps"]
    assert len(steps["frames"]) == 8 and steps["layout"]["sliders"]
    assert "chat" in json.dumps(figures["attnviz.show"]["layout"])  # the target words label the rows


def rows(z: list | dict) -> int:
    """The rows of a Plotly matrix: a list of rows, or a typed array with its shape ("8, 8")."""
    return int(z["shape"].split(",")[0]) if isinstance(z, dict) else len(z)
