"""The alignment history in a checkpoint: saved with the weights, loaded back exactly, read
without the weights as plain data, and dropped with a warning (the model still loads) when edited."""

from __future__ import annotations

import json
import shutil
import warnings

import numpy as np
import pytest

from attnviz.errors import CheckpointError
from attnviz.store import ModelWarning, load_checkpoint, read_history, save
from attnviz.store.catalog import resolve
from attnviz.store.history import FIELD
from attnviz.training.config import TrainConfig
from attnviz.training.fit import fit
from tests.support.checkpoints import rewrite
from tests.support.tiny import tiny_translator


@pytest.fixture(scope="module")
def recorded(corpus, tmp_path_factory):
    translator = tiny_translator(corpus)
    fit(translator, corpus, TrainConfig(epochs=2, batch_size=8, lr=1e-2, patience=None))
    path = save(translator, tmp_path_factory.mktemp("history") / "recorded.safetensors", store="fp16")
    return translator, path


def test_a_saved_history_loads_back_exactly(recorded):
    translator, path = recorded
    loaded = load_checkpoint(path).history
    assert loaded.points == translator.history.points
    assert [p.to_dict() for p in loaded.probes] == [p.to_dict() for p in translator.history.probes]
    for kept, written in zip(loaded.weights, translator.history.weights, strict=True):
        assert kept.dtype == np.float16 and np.array_equal(kept, written.astype(np.float16))


def test_read_history_gives_plain_data(recorded):
    translator, path = recorded
    data = read_history(path)
    json.dumps(data)  # plain data: lists, numbers, strings
    assert data["points"] == translator.history.points
    first = data["probes"][0]
    points, tgt, src = len(data["points"]), len(first["target_tokens"]), len(first["source_tokens"])
    assert np.asarray(first["weights"]).shape == (points, tgt, src)


def test_read_history_takes_a_models_name_as_load_does(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    by_name = read_history("toy-fr-additive-luong")
    assert by_name is not None and by_name == read_history(resolve("toy-fr-additive-luong"))
    with pytest.raises(CheckpointError, match="no model named 'no-such-model'"):
        read_history("no-such-model")


def test_a_model_without_history_has_none(corpus, tmp_path):
    translator = tiny_translator(corpus)
    path = save(translator, tmp_path / "plain.safetensors")
    assert read_history(path) is None and load_checkpoint(path).history is None


def test_a_copied_file_keeps_its_history(recorded, tmp_path):
    _, path = recorded
    copy = shutil.copy(path, tmp_path / "uploaded.safetensors")
    assert read_history(copy)["points"] == read_history(path)["points"]


def _edit_points(header: dict) -> dict:
    header[FIELD]["points"][0]["step"] = "zero"
    return header


def _edit_probe(header: dict) -> dict:
    header[FIELD]["probes"][0]["target_tokens"] = header[FIELD]["probes"][0]["target_tokens"][:-1]
    return header


def _drop_field(header: dict) -> dict:
    del header[FIELD]
    return header


@pytest.mark.parametrize("edit", [_edit_points, _edit_probe, _drop_field], ids=["point", "shape", "no-field"])
def test_an_edited_history_is_skipped_with_a_warning_and_the_model_loads(recorded, tmp_path, edit):
    _, path = recorded
    edited = rewrite(path, tmp_path / "edited.safetensors", attnviz=edit)
    with pytest.warns(ModelWarning, match="alignment history was skipped"):
        translator = load_checkpoint(edited)
    assert translator.history is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)
        assert read_history(edited) is None


def _history_edit(change):
    def edit(header: dict) -> dict:
        change(header[FIELD])
        return header

    return edit


MALFORMED_HISTORIES = {
    "bad role": (
        _history_edit(lambda h: h["probes"][0].update(role="teacher")),
        "probe 0 must be an object with a role of probe, test",
    ),
    "step not a whole number": (
        _history_edit(lambda h: h["points"][0].update(step=1.5)),
        "point 0 needs whole-number step and epoch fields",
    ),
    "unknown point kind": (
        _history_edit(lambda h: h["points"][0].update(kind="lap")),
        "point 0 must be an object with a kind of",
    ),
    "loss not a number": (
        _history_edit(lambda h: h["points"][-1].update(loss="low")),
        "field loss must be a number or null",
    ),
    "link outside the tokens": (
        _history_edit(lambda h: h["probes"][0].update(sure=[[99, 0]])),
        "probe 0 sure must be [source, target] index pairs inside the probe's tokens",
    ),
    "tokens not strings": (
        _history_edit(lambda h: h["probes"][0].update(source_tokens=[1, 2])),
        "probe 0 source_tokens must be a list of 1 to",
    ),
    "no probes": (_history_edit(lambda h: h.update(probes=[])), "probes must be a list of 1 to"),
    "a probe without its tensor": (
        _history_edit(lambda h: h["probes"].append(h["probes"][0])),
        f"it needs one tensor {FIELD}.K per probe",
    ),
    "another format version": (
        _history_edit(lambda h: h.update(format_version=99)),
        "the header field must be an object with format_version",
    ),
}


@pytest.mark.parametrize("case", list(MALFORMED_HISTORIES))
def test_each_malformed_history_is_skipped_saying_why_and_the_model_loads(recorded, tmp_path, case):
    edit, reason = MALFORMED_HISTORIES[case]
    _, path = recorded
    edited = rewrite(path, tmp_path / "edited.safetensors", attnviz=edit)
    with pytest.warns(ModelWarning, match="edited.safetensors: its alignment history was skipped") as seen:
        loaded = load_checkpoint(edited)
    assert loaded.history is None and reason in str(seen[0].message)
    assert loaded.translate("a b c").target_tokens == load_checkpoint(path).translate("a b c").target_tokens


def test_weights_outside_zero_and_one_skip_the_history(corpus, tmp_path):
    translator = tiny_translator(corpus)
    fit(translator, corpus, TrainConfig(epochs=1, batch_size=8, lr=1e-2, patience=None))
    translator.history.weights[0][0, 0, 0] = 2.0
    path = save(translator, tmp_path / "heavy.safetensors")
    with pytest.warns(ModelWarning, match=rf"{FIELD}\.0 must hold attention weights in \[0, 1\]"):
        assert load_checkpoint(path).history is None
