"""Checkpoints: exact round trip, atomic writes, and refusal of unsafe or broken files (bad configs
before a model is built, non-finite weights)."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from attnviz.errors import CheckpointError
from attnviz.model.config import ModelConfig
from attnviz.model.encoder import RNNEncoder
from attnviz.model.seq2seq import Seq2Seq
from attnviz.store import checkout_dir, checkpoint
from attnviz.store.checkpoint import _vocab_field, _vocab_from_field, load_checkpoint, read_header, save
from tests.support.checkpoints import rewrite
from tests.support.tiny import tiny_translator


def test_round_trip_is_exact(saved):
    tr, path = saved
    back = load_checkpoint(path)
    for (k, a), (k2, b) in zip(tr.model.state_dict().items(), back.model.state_dict().items(), strict=True):
        assert k == k2 and torch.equal(a, b)
    assert back.config == tr.config and back.src_vocab == tr.src_vocab and back.tgt_vocab == tr.tgt_vocab
    assert back.src_tokenizer == tr.src_tokenizer and back.meta["metrics"] == {"bleu": 12.5}
    assert np.array_equal(back.translate("a b c").weights, tr.translate("a b c").weights)


def test_a_saved_checkpoint_is_readable_by_others_as_a_shipped_one_is(saved, tmp_path):
    """Written through a private temporary file, a checkpoint is renamed into place readable by all
    (0644), also over an existing file: a web server or a colleague's app reads the models folder.
    (Every trained and saved model was 0600.)"""
    tr, _ = saved
    path = save(tr, tmp_path / "mine.safetensors")
    assert path.stat().st_mode & 0o777 == 0o644
    path.chmod(0o600)
    assert save(tr, path, store="int8").stat().st_mode & 0o777 == 0o644


def test_half_precision_storage_loads_as_float32(saved, tmp_path):
    tr, _ = saved
    path = save(tr, tmp_path / "half.safetensors", store="fp16")
    back = load_checkpoint(path)
    assert next(back.model.parameters()).dtype == torch.float32
    assert back.translate("a b").target_tokens  # decodes


def test_pickles_are_refused_without_running_them(tmp_path):
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    for name in ("evil.pt", "evil.safetensors"):
        path = tmp_path / name
        path.write_bytes(pickle.dumps(Evil()))
        with pytest.raises(CheckpointError, match=r"pickle|refused"):
            load_checkpoint(path)
    torch.save({"x": torch.zeros(1)}, tmp_path / "zip.safetensors")
    with pytest.raises(CheckpointError, match="pickle/zip"):
        load_checkpoint(tmp_path / "zip.safetensors")
    assert not marker.exists()


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda b: b"", "empty"),
        (lambda b: b[: len(b) // 2], "corrupt or truncated"),
        (lambda b: b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all", "corrupt or truncated"),
    ],
)
def test_corrupt_files_get_a_clear_error(saved, tmp_path, mutate, message):
    _, path = saved
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(mutate(path.read_bytes()))
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(bad)


def test_foreign_and_mismatched_checkpoints(saved, tmp_path):
    tr, path = saved
    foreign = tmp_path / "foreign.safetensors"
    save_file({"w": torch.zeros(2)}, foreign)
    with pytest.raises(CheckpointError, match="not an attnviz checkpoint"):
        load_checkpoint(foreign)
    header = read_header(path)
    tensors = dict(tr.model.state_dict())

    def write(name, hdr, ts):
        p = tmp_path / name
        save_file({k: v.contiguous() for k, v in ts.items()}, p, metadata={"attnviz": json.dumps(hdr)})
        return p

    newer = write("newer.safetensors", {**header, "format_version": 99}, tensors)
    with pytest.raises(CheckpointError, match="format 99"):
        load_checkpoint(newer)
    wrong_arch = write("arch.safetensors", {**header, "config": {**header["config"], "score": "dot"}}, tensors)
    with pytest.raises(CheckpointError, match="do not fit the architecture"):
        load_checkpoint(wrong_arch)
    wrong_vocab = write("vocab.safetensors", {**header, "src_vocab": header["src_vocab"].rsplit("\n", 1)[0]}, tensors)
    with pytest.raises(CheckpointError, match="vocabularies"):
        load_checkpoint(wrong_vocab)
    wrong_tgt = write("tgt.safetensors", {**header, "tgt_vocab": header["tgt_vocab"].rsplit("\n", 1)[0]}, tensors)
    with pytest.raises(CheckpointError, match=r"vocabularies .* do not match the model's"):
        load_checkpoint(wrong_tgt)  # loaded, it would print the wrong words
    escaping = header["tgt_vocab"].split("\n")
    escaping[-1] = "\x1b]0;owned\x07"  # a terminal escape as a word: translate would print it raw
    terminal = write("escape.safetensors", {**header, "tgt_vocab": "\n".join(escaping)}, tensors)
    with pytest.raises(CheckpointError, match="control character"):
        load_checkpoint(terminal)
    wrong_shape = write("shape.safetensors", {**header, "config": {**header["config"], "hidden_dim": 32}}, tensors)
    with pytest.raises(CheckpointError, match="shape"):
        load_checkpoint(wrong_shape)
    unknown = write("unknown.safetensors", {**header, "config": {**header["config"], "rotary": True}}, tensors)
    with pytest.raises(CheckpointError, match="another version"):
        load_checkpoint(unknown)


def _config(h: dict, **change) -> dict:
    return {**h, "config": {**h["config"], **change}}


CRAFTED = {
    "not JSON": (lambda h: "{", "the attnviz header is not valid JSON (Expecting property name"),
    "a list": (lambda h: "[1]", "the header is not an attnviz checkpoint header"),
    "another format": (lambda h: {"x": 1}, "the header is not an attnviz checkpoint header"),
    "no src_vocab": (lambda h: {k: v for k, v in h.items() if k != "src_vocab"}, "the header lacks 'src_vocab'"),
    "no tgt_tokenizer": (
        lambda h: {k: v for k, v in h.items() if k != "tgt_tokenizer"},
        "the header lacks 'tgt_tokenizer'",
    ),
    "config a number": (lambda h: {**h, "config": 5}, "field 'config' must be a JSON object, not int"),
    "config incomplete": (
        lambda h: {**h, "config": {k: v for k, v in h["config"].items() if k != "src_vocab_size"}},
        "the model config is incomplete",
    ),
    "vocabulary a number": (lambda h: {**h, "src_vocab": 5}, "a saved vocabulary must be a list of strings"),
    "tokenizer a number": (lambda h: {**h, "src_tokenizer": 5}, "a saved tokenizer must be a JSON object {...}, got 5"),
    "size a string": (lambda h: _config(h, hidden_dim="8"), "hidden_dim must be a whole number, got '8' (str)"),
    "size a boolean": (lambda h: _config(h, hidden_dim=True), "hidden_dim must be a whole number, got True (bool)"),
    "size zero": (lambda h: _config(h, hidden_dim=0), "hidden_dim must be between 1 and 100000, got 0"),
    "dropout NaN": (lambda h: _config(h, dropout=float("nan")), "dropout must be in [0, 1), got nan"),
    "dropout too large": (lambda h: _config(h, dropout=1.5), "dropout must be in [0, 1), got 1.5"),
    "window zero": (lambda h: _config(h, window=0), "window must be between 1 and 50, got 0"),
    "max_src_len too large": (lambda h: _config(h, max_src_len=5000), "max_src_len must be between 2 and 2000"),
    "too many layers": (lambda h: _config(h, enc_layers=17), "enc_layers must be between 1 and 16, got 17"),
}


@pytest.mark.parametrize("case", list(CRAFTED))
def test_a_crafted_header_is_one_checkpoint_error_naming_the_file_and_the_field(saved, tmp_path, case):
    """A header edited by hand or by another program: one line naming the file and what is wrong with
    the header, before any model is built from it."""
    change, message = CRAFTED[case]
    _, path = saved
    crafted = rewrite(path, tmp_path / "crafted.safetensors", attnviz=change)
    with pytest.raises(CheckpointError) as info:
        load_checkpoint(crafted)
    text = str(info.value)
    assert text.startswith("crafted.safetensors: ") and message in text and "\n" not in text


def test_sigkill_during_save_leaves_the_previous_file_intact(saved, tmp_path):
    _, path = saved
    before = path.read_bytes()
    script = f"""
import os, signal, sys
sys.path.insert(0, {str(checkout_dir())!r})
import safetensors.torch as st
from attnviz.store import checkpoint
real = st.save_file
def dying(tensors, filename, metadata=None):
    real(tensors, filename, metadata=metadata)
    os.kill(os.getpid(), signal.SIGKILL)  # killed after writing the temp file, before the rename
checkpoint.save_file = dying
from attnviz.store.checkpoint import load_checkpoint, save
tr = load_checkpoint({str(path)!r})
tr.meta["metrics"] = {{"bleu": 99.0}}
save(tr, {str(path)!r})
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert proc.returncode == -9
    assert path.read_bytes() == before
    assert load_checkpoint(path).meta["metrics"] == {"bleu": 12.5}


def test_vocabularies_are_stored_one_token_per_line_and_older_files_still_load(saved, tmp_path):
    tr, path = saved
    header = read_header(path)
    assert header["format_version"] == 2
    assert header["src_vocab"].split("\n") == tr.src_vocab.to_list()
    v1 = tmp_path / "v1.safetensors"  # format 1 kept vocabularies as JSON lists
    old = {**header, "format_version": 1, "src_vocab": tr.src_vocab.to_list(), "tgt_vocab": tr.tgt_vocab.to_list()}
    save_file({k: v.contiguous() for k, v in tr.model.state_dict().items()}, v1, metadata={"attnviz": json.dumps(old)})
    assert load_checkpoint(v1).tgt_vocab.to_list() == tr.tgt_vocab.to_list()


def test_a_token_with_a_newline_is_refused_in_either_form():
    """No tokenizer of attnviz makes one (a character model reads whitespace as one space); one from a
    file would split a translation's line in two."""
    tokens = ["<pad>", "<unk>", "<bos>", "<eos>", "a", "a\nb"]
    with pytest.raises(CheckpointError, match="control character"):
        _vocab_from_field(tokens)
    assert _vocab_from_field(_vocab_field(tokens[:5])).to_list() == tokens[:5]


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"style": "bahdanau", "score": "additive"},
        {"encoder": "transformer", "heads": 2},
        {"cell": "lstm", "enc_layers": 2, "dec_layers": 2},
        {"score": "local_p", "tie_embeddings": True},
    ],
)
def test_the_shape_check_sees_the_shapes_the_model_has(changes):
    """The header's shapes are checked on a meta-device model built without initialisation."""
    cfg = ModelConfig(src_vocab_size=50, tgt_vocab_size=40, emb_dim=16, hidden_dim=16, attn_dim=8, **changes)
    shapes = checkpoint._expected_shapes(checkpoint._meta_model(cfg))
    assert shapes == {n: list(t.shape) for n, t in Seq2Seq(cfg).state_dict().items()}


def rewrite_header(path: Path, edit) -> None:
    """Rewrite a checkpoint with ``edit(header)`` applied to its attnviz header, same tensors."""
    with safe_open(str(path), framework="pt") as f:
        header = json.loads(f.metadata()["attnviz"])
    edit(header)
    save_file(load_file(str(path)), str(path), metadata={"attnviz": json.dumps(header)})


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda h: h["config"].update(hidden_dim=True), "hidden_dim must be a whole number"),
        (lambda h: h["config"].update(dropout="0.1"), "dropout must be a number"),
        (lambda h: h["config"].update(hidden_dim=8000), "has shape"),
        (lambda h: h.update(src_tokenizer=7), "good.safetensors: "),
    ],
)
def test_bad_configs_are_refused_before_building_the_model(model_file, monkeypatch, edit, message):
    rewrite_header(model_file, edit)
    import attnviz.store.checkpoint as checkpoint

    real = checkpoint.Seq2Seq

    def only_on_meta(cfg):  # the real model must not be allocated for a bad file
        assert torch.empty(0).device.type == "meta", "a model was allocated before the shapes were checked"
        return real(cfg)

    monkeypatch.setattr(checkpoint, "Seq2Seq", only_on_meta)
    start = time.perf_counter()
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(model_file)
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_weights_are_refused(corpus, models, value):
    tr = tiny_translator(corpus)
    with torch.no_grad():
        next(iter(tr.model.parameters()))[0, 0] = value
    path = save(tr, models / "nan.safetensors")
    with pytest.raises(CheckpointError, match="NaN or infinite"):
        load_checkpoint(path)


def test_a_loaded_model_has_its_rnn_weights_flattened_on_its_device(saved, monkeypatch):
    flattened = []
    monkeypatch.setattr(RNNEncoder, "flatten_parameters", lambda self: flattened.append(self))
    back = load_checkpoint(saved[1], device="cpu")
    assert flattened[-1] is back.model.encoder  # after the weights were loaded and moved


def test_saving_onto_a_folder_says_so(saved, tmp_path):
    tr, _ = saved
    (tmp_path / "dir.safetensors").mkdir()
    with pytest.raises(CheckpointError, match=r"dir\.safetensors is a folder; give a file name ending in"):
        save(tr, tmp_path / "dir.safetensors")
    assert [p.name for p in (tmp_path / "dir.safetensors").iterdir()] == []


def test_a_checkpoint_over_the_size_limit_is_refused_unread(saved, monkeypatch):
    _, path = saved
    monkeypatch.setattr(checkpoint, "MAX_CHECKPOINT_BYTES", path.stat().st_size - 1)
    with pytest.raises(CheckpointError, match="MiB are refused"):
        load_checkpoint(path)
