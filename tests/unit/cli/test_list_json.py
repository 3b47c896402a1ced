"""``attnviz list --json`` keeps its exact bytes: shipped models from a manifest (keys missing,
a file absent), trained ones newest first, another session's upload-trained model without its
example, a model of unknown task. The fixture was written by the dict-based catalog."""

from __future__ import annotations

import json
import os
from pathlib import Path

from attnviz.store.checkpoint import save
from tests.support.cli import run
from tests.support.tiny import tiny_translator

FIXTURE = Path(__file__).parent / "fixtures" / "list.json"
MANIFEST = [
    {
        "name": "alpha",
        "file": "alpha.safetensors",
        "task": "toy-fr",
        "score": "dot",
        "style": "luong",
        "encoder": "gru",
        "example": "le chat noir — élan",
        "metrics": {"bleu": 41.5, "aer": 0.25, "valid": {"bleu": 40.0, "split": "valid"}},
        "parameters": 1234,
        "train_seconds": 12.5,
        "epochs": 3,
        "precision": "fp32",
    },
    {"name": "beta", "file": "beta.safetensors", "score": "additive", "style": "bahdanau"},
    {"name": "gone", "file": "gone.safetensors", "task": "dates", "score": "dot", "style": "luong"},
]


def _folders(corpus, tmp_path: Path, monkeypatch) -> tuple[Path, Path]:
    shipped, models = tmp_path / "shipped", tmp_path / "models"
    shipped.mkdir()
    models.mkdir()
    for item in MANIFEST[:2]:
        save(tiny_translator(corpus), shipped / item["file"])
    (shipped / "manifest.json").write_text(json.dumps({"models": MANIFEST}), encoding="utf-8")
    metas = {
        "mine": {"task": "reverse", "example": "a b c", "metrics": {"bleu": 99.0}, "parameters": 77},
        "theirs": {"task": "uploaded.tsv", "example": "secret words", "owner": "session-1", "train_seconds": 2.0},
        "anon": {},
    }
    styles = {"mine": ("general", "luong"), "theirs": ("dot", "bahdanau"), "anon": ("additive", "bahdanau")}
    for age, (name, meta) in enumerate(metas.items()):
        score, style = styles[name]
        tr = tiny_translator(corpus, score=score, style=style)
        tr.meta.clear()
        tr.meta.update(meta)
        path = save(tr, models / f"{name}.safetensors")
        os.utime(path, (1_000_000 - age, 1_000_000 - age))  # mine newest, anon oldest
    monkeypatch.setenv("ATTNVIZ_PRETRAINED", str(shipped))
    monkeypatch.setenv("ATTNVIZ_MODELS", str(models))
    monkeypatch.chdir(tmp_path)
    return shipped, models


def test_list_json_is_unchanged(capsys, corpus, tmp_path, monkeypatch):
    shipped, models = _folders(corpus, tmp_path, monkeypatch)
    code, out, _ = run(capsys, "list", "--json")
    assert code == 0
    out = out.replace(str(shipped.resolve()), "SHIPPED").replace(str(models.resolve()), "MODELS")
    assert out == FIXTURE.read_text(encoding="utf-8")
