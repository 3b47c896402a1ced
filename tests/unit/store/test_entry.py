"""A catalog entry: one constructor per source (manifest, trained file, upload), each filling the
same fields; frozen and hashable, so a page may key a cache on it; a rewritten file is a new
version; another session's model trained on its upload hides its example and data."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest

from attnviz.store import HIDDEN_TASK, ModelEntry, read_header


def test_a_manifest_item_becomes_a_shipped_entry(tmp_path):
    (tmp_path / "a.safetensors").write_bytes(b"x")
    item = {
        "name": "a",
        "file": "a.safetensors",
        "task": "toy-fr",
        "score": "dot",
        "style": "luong",
        "metrics": {"bleu": 1.0},
        "epochs": 3,
        "precision": "bf16",
        "device": "cuda",
    }
    entry = ModelEntry.from_manifest(item, tmp_path)
    assert (entry.name, entry.path, entry.source) == ("a", str(tmp_path / "a.safetensors"), "pretrained")
    assert (entry.task, entry.score, entry.style, entry.owner) == ("toy-fr", "dot", "luong", None)
    assert (entry.epochs, entry.precision, entry.device) == (3, "bf16", "cuda")
    assert entry.version == (tmp_path / "a.safetensors").stat().st_mtime
    assert ModelEntry.from_manifest({**item, "file": "gone.safetensors"}, tmp_path).version == 0.0  # not here
    assert list(entry.to_dict())[:2] == ["name", "task"]  # the manifest's key order in `attnviz list --json`


def test_a_trained_file_becomes_an_entry_its_owner_sees_whole(model_file):
    header = read_header(model_file)
    entry = ModelEntry.from_trained(model_file, header, None)
    assert (entry.name, entry.source, entry.task, entry.example) == ("good", "trained", "reverse", "a b c")
    assert entry.metrics == {} and list(entry.to_dict())[:2] == ["name", "path"]
    owned = {**header, "meta": {**header["meta"], "owner": "s1"}}
    assert ModelEntry.from_trained(model_file, owned, "s1").example == "a b c"
    hidden = ModelEntry.from_trained(model_file, owned, "s2")
    assert (hidden.example, hidden.task, hidden.owner) == (None, HIDDEN_TASK, "s1")


def test_an_upload_is_its_session_s(model_file):
    entry = ModelEntry.from_upload("mine", model_file, read_header(model_file), "s1")
    assert (entry.name, entry.source, entry.owner, entry.example) == ("mine", "uploaded", "s1", "a b c")


def test_an_entry_is_frozen_hashable_and_versioned(model_file):
    entry = ModelEntry.from_trained(model_file, read_header(model_file), None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.name = "other"  # type: ignore[misc]
    assert {entry: 1}[dataclasses.replace(entry, metrics={"bleu": 2.0})] == 1  # metrics take no part in the key
    os.utime(model_file, (1_000_000, 1_000_000))
    rewritten = ModelEntry.from_trained(model_file, read_header(model_file), None)
    assert rewritten != entry and rewritten.version == 1_000_000


def test_a_training_stopped_before_its_last_epoch_is_listed_as_unfinished(models, capsys):
    """A checkpoint saved after epoch 1 of 3 (an interrupted `attnviz train`, or a run stopped in the app)
    says so in the catalog, `attnviz list` and its JSON; a finished one says nothing of it. (Both read
    'trained', and Explore served the half-trained model as a finished one.)"""
    from attnviz.store import list_models
    from tests.support.cli import run
    from tests.support.jobs import stranded_run

    path = stranded_run(models, "cut", epochs=3)
    path.rename(models / "cut.safetensors")
    (entry,) = [m for m in list_models() if m.name == "cut"]
    assert entry.unfinished == {"epochs": 1, "of": 3} and entry.epochs == 1
    assert entry.status == "trained, unfinished: 1 of 3 epochs"
    code, out, _ = run(capsys, "list")
    assert code == 0 and "trained, unfinished: 1 of 3 epochs" in out
    code, out, _ = run(capsys, "list", "--json")
    (listed,) = [m for m in json.loads(out)["models"] if m["name"] == "cut"]
    assert listed["unfinished"] == {"epochs": 1, "of": 3}


def test_a_finished_training_has_no_unfinished_mark(model_file):
    entry = ModelEntry.from_trained(model_file, read_header(model_file), None)
    assert entry.unfinished is None and entry.status == "trained" and "unfinished" not in entry.to_dict()
