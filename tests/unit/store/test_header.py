"""A checkpoint's header is untrusted: wrong-typed meta/config, deep nesting, a huge header or
relabelled weights make one file skipped or refused with one line naming it, never a traceback."""

from __future__ import annotations

import json

import pytest

from attnviz.errors import CheckpointError
from attnviz.store import catalog
from attnviz.store.checkpoint import load_checkpoint, read_header
from tests.support.checkpoints import rewrite
from tests.support.cli import run

BROKEN = {
    "meta-list": lambda h: {**h, "meta": [1, 2]},
    "meta-string": lambda h: {**h, "meta": "hello"},
    "config-list": lambda h: {**h, "config": [1]},
    "owner-int": lambda h: {**h, "meta": {**h["meta"], "owner": 7}},
    "deep": lambda h: {**h, "meta": {**h["meta"], "x": json.loads("[" * 100 + "]" * 100)}},
    "deeper": lambda h: '{"format": "attnviz-checkpoint", "x": ' + "[" * 200_000 + "]" * 200_000 + "}",
}


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_one_malformed_checkpoint_is_skipped_and_the_rest_keeps_working(capsys, models, model_file, kind):
    rewrite(model_file, models / f"bad-{kind}.safetensors", attnviz=BROKEN[kind])
    with pytest.warns(catalog.ModelWarning, match=f"bad-{kind}.safetensors") as seen:
        names = [m.name for m in catalog.list_models()]
    assert "good" in names and f"bad-{kind}" not in names
    assert all("\n" not in str(w.message) for w in seen)
    with pytest.raises(CheckpointError, match=f"bad-{kind}"):
        read_header(models / f"bad-{kind}.safetensors")
    code, out, err = run(capsys, "list")
    assert code == 0 and "good" in out and "Traceback" not in err and f"bad-{kind}.safetensors" in err


def test_wrong_typed_meta_values_are_dropped_not_fatal(models, model_file):
    def edit(h):
        meta = {**h["meta"], "task": 3, "example": ["x"], "parameters": "many", "train_seconds": "slow"}
        return {**h, "meta": {**meta, "metrics": {"bleu": "high", "aer": [1], "exact_match": 0.5, "n": 4}}}

    rewrite(model_file, models / "odd.safetensors", attnviz=edit)
    entry = next(m for m in catalog.list_models() if m.name == "odd")
    assert entry.task is None and entry.example is None and entry.parameters is None
    assert entry.metrics == {"exact_match": 0.5, "n": 4}
    rewrite(model_file, models / "odd2.safetensors", attnviz=lambda h: {**h, "meta": {**h["meta"], "metrics": [1]}})
    assert next(m for m in catalog.list_models() if m.name == "odd2").metrics == {}
    assert load_checkpoint(models / "odd.safetensors").meta["metrics"] == {"exact_match": 0.5, "n": 4}


def test_a_manifest_with_wrong_typed_entries_is_skipped_with_a_warning(capsys, tmp_path, monkeypatch):
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / "manifest.json").write_text(json.dumps({"models": [1, 2, {"name": "x", "file": "../x"}]}))
    monkeypatch.setenv("ATTNVIZ_PRETRAINED", str(shipped))
    monkeypatch.setenv("ATTNVIZ_MODELS", str(tmp_path / "none"))
    with pytest.warns(catalog.ModelWarning, match=r"models\[0\]"):
        assert catalog.list_models() == []
    code, _, err = run(capsys, "list")
    assert code == 0 and "Traceback" not in err and "models[2]" in err


@pytest.mark.parametrize("dtype", ["I32", "BF16", "I64"])
def test_weights_relabelled_to_another_dtype_are_refused_naming_the_tensor(models, model_file, dtype):
    def relabel(index):
        name = sorted(k for k in index if k != "__metadata__")[0]
        entry = index[name]
        if dtype == "BF16":  # half the bytes per value: twice the values, as the shape's last axis
            entry["shape"] = [*entry["shape"][:-1], entry["shape"][-1] * 2] if entry["shape"] else [2]
        elif dtype == "I64":
            entry["shape"] = [*entry["shape"][:-1], entry["shape"][-1] // 2]
        entry["dtype"] = dtype

    path = rewrite(model_file, models / "relabelled.safetensors", tensors=relabel)
    with pytest.raises(CheckpointError, match=rf"weight \S+ is stored as {dtype}"):
        load_checkpoint(path)


def test_a_huge_header_is_refused_before_it_is_parsed(models, model_file):
    padding = "x" * (5 * 2**20)
    huge = models / "huge.safetensors"
    path = rewrite(model_file, huge, attnviz=lambda h: {**h, "meta": {**h["meta"], "p": padding}})
    with pytest.raises(CheckpointError, match=r"huge\.safetensors: its header is 5\.0 MiB"):
        read_header(path)
    with pytest.warns(catalog.ModelWarning, match="huge.safetensors"):
        assert "huge" not in [m.name for m in catalog.list_models()]
