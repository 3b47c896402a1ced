"""The files a trace is downloaded as: the matrix CSV has a row per target step and no formula, the
Pharaoh line leaves out the links of ``<eos>`` unless asked, a pair of decodes fits one file."""

from __future__ import annotations

import io
import json

import pandas as pd

from attnviz.external import matrix_csv, pair_csv, pair_json, pharaoh_text, read_attention
from attnviz.store.checkpoint import load_checkpoint
from tests.support.alignments import make_alignment


def test_csv_rows_are_target_steps(app_models_dir):
    tr = load_checkpoint(app_models_dir / "toyfr-localp-luong.safetensors")
    al = tr.translate("=cmd the cat .")
    frame = pd.read_csv(io.StringIO(matrix_csv(al, "scores")))
    assert len(frame) == len(al.target_tokens)
    assert frame.columns[2].startswith("'=")  # no spreadsheet formula


def test_pharaoh_leaves_out_the_links_of_eos_unless_asked():
    al = make_alignment(["a", "b"], ["x", "y"], seed=3)
    al.weights[:] = 0
    al.weights[0, 1] = al.weights[1, 2] = al.weights[2, 0] = 1  # x<-b, y<-<eos>, <eos><-a
    assert pharaoh_text(al).split() == ["1-0"]
    assert pharaoh_text(al, with_eos=True).split() == ["1-0", "2-1", "0-2"]


def test_the_pair_in_one_file():
    panels = {"Bahdanau": make_alignment(["a"], ["x"], seed=1), "Luong": make_alignment(["a"], ["x", "y"], seed=2)}
    models = {"Bahdanau": "m-b", "Luong": "m-l"}
    text = pair_json(panels, models, "a")
    doc = json.loads(text)
    assert doc["metadata"] == {"sentence": "a", "models": models}
    assert [m["name"] for m in doc["matrices"]] == ["Bahdanau", "Luong"]
    back = read_attention(text.encode(), "pair.json")  # the same schema as any attention file
    assert back.alignments["Luong"].target_tokens == ["x", "y", "<eos>"]
    assert back.metadata["models"]["Luong"] == "m-l"
    frame = pd.read_csv(io.StringIO(pair_csv(panels, models)))
    assert len(frame) == 2 * 3 + 2 * 2 and set(frame["panel"]) == {"Bahdanau", "Luong"}
    assert list(frame.columns) == ["panel", "model", "step", "target", "position", "source", "weights"]
