"""Hostile JoeyNMT folders through ``attnviz import-joeynmt``: a wrong-typed or deeply nested config, a
checkpoint of NaN or integer weights and oversized text files end in one line and exit 2 with nothing
saved; a shipped model's name is refused as ``attnviz train`` refuses it."""

from __future__ import annotations

import io
import os
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import torch
import yaml

from attnviz.errors import CheckpointError
from attnviz.external import import_joeynmt_zip
from attnviz.store import hold_lock, name_lock, release_lock
from tests.support.joeynmt_files import joey_config, write_joey_folder

ROOT = Path(__file__).resolve().parents[3]


def _import(tmp_path: Path, *argv: str, limit_gb: int | None = None) -> subprocess.CompletedProcess:
    def limit():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit_gb << 30, limit_gb << 30))

    env = {**os.environ, "ATTNVIZ_MODELS": str(tmp_path / "models")}
    command = [sys.executable, "-m", "attnviz", "import-joeynmt", *argv]
    preexec = limit if limit_gb else None
    return subprocess.run(command, capture_output=True, text=True, timeout=180, cwd=ROOT, env=env, preexec_fn=preexec)


def _one_line(proc: subprocess.CompletedProcess, message: str) -> None:
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert message in proc.stderr


CONFIGS = {
    "embeddings-a-list": (lambda c: c["model"]["encoder"].update(embeddings=[1]), "model.encoder.embeddings is [1]"),
    "data-a-list": (lambda c: c.update(data=[1]), "data is [1]; it must be a mapping"),
    "data.src-a-string": (lambda c: c["data"].update(src="x"), "data.src is 'x'; it must be a mapping"),
    "special_symbols-a-list": (lambda c: c["data"].update(special_symbols=[1]), "data.special_symbols is [1]"),
    "unk_id-a-string": (
        lambda c: c["data"].update(special_symbols={"unk_id": "0"}),
        "data.special_symbols.unk_id is '0'; it must be a whole number",
    ),
    "lang_tags-a-number": (lambda c: c["data"].update(special_symbols={"lang_tags": 5}), "a list of strings"),
    "max_length-a-word": (lambda c: c["data"]["src"].update(max_length="abc"), "data.src.max_length is 'abc'"),
    "lowercase-a-word": (lambda c: c["data"]["src"].update(lowercase="no"), "data.src.lowercase is 'no'"),
    "voc_file-a-list": (lambda c: c["data"]["src"].update(voc_file=[1]), "data.src.voc_file is [1]"),
}


@pytest.mark.parametrize("case", sorted(CONFIGS))
def test_a_wrong_typed_config_value_is_named(tmp_path, case):
    change, message = CONFIGS[case]
    cfg = joey_config()
    change(cfg)
    folder = write_joey_folder(tmp_path / "m")
    (folder / "config.yaml").write_text(yaml.safe_dump(cfg))
    _one_line(_import(tmp_path, str(folder), "--out", "m"), message)
    assert not (tmp_path / "models" / "m.safetensors").exists()


def test_a_config_nested_past_the_parser_is_one_line(tmp_path):
    folder = write_joey_folder(tmp_path / "m")
    (folder / "config.yaml").write_text("model: " + "[" * 50_000 + "]" * 50_000 + "\n")
    _one_line(_import(tmp_path, str(folder), "--out", "m"), "nested too deeply to be a JoeyNMT config")


@pytest.mark.parametrize(
    ("change", "message"),
    [(lambda t: t * float("nan"), "holds NaN or infinite values"), (lambda t: t.long(), "is not floating point")],
)
def test_a_checkpoint_of_nan_or_integer_weights_is_refused(tmp_path, change, message):
    folder = write_joey_folder(tmp_path / "m")
    state = torch.load(folder / "best.ckpt", weights_only=True)["model_state"]
    torch.save({"model_state": {k: change(v) for k, v in state.items()}}, folder / "best.ckpt")
    _one_line(_import(tmp_path, str(folder), "--out", "m"), message)


def test_a_plain_pickle_is_refused_in_one_line_and_runs_nothing(tmp_path):
    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {tmp_path / 'ran'}",))

    folder = write_joey_folder(tmp_path / "m")
    (folder / "best.ckpt").write_bytes(pickle.dumps({"model_state": Evil()}))
    _one_line(_import(tmp_path, str(folder), "--out", "m"), "not a checkpoint torch.load can read")
    assert not (tmp_path / "ran").exists()


def test_a_huge_vocabulary_file_is_refused_without_reading_it(tmp_path):
    folder = write_joey_folder(tmp_path / "m")
    with open(tmp_path / "huge.txt", "wb") as f:
        f.truncate(3 << 30)  # sparse: 3 GB that take no disk
    proc = _import(tmp_path, str(folder), "--src-vocab", str(tmp_path / "huge.txt"), "--out", "m", limit_gb=2)
    _one_line(proc, "over the 20 MB limit of a vocabulary")


def test_a_shipped_models_name_is_refused(tmp_path):
    folder = write_joey_folder(tmp_path / "m")
    _one_line(
        _import(tmp_path, str(folder), "--out", "dates-dot-luong"), "'dates-dot-luong' is the name of a shipped model"
    )
    assert not (tmp_path / "models" / "dates-dot-luong.safetensors").exists()


def test_a_zip_whose_member_fails_its_checksum_is_one_error(tmp_path):
    folder = write_joey_folder(tmp_path / "m")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for path in sorted(folder.iterdir()):
            z.write(path, path.name)
    raw = bytearray(buffer.getvalue())
    central = raw.find(b"PK\x01\x02")  # the first entry (best.ckpt) in the central directory
    raw[central + 16] ^= 0xFF  # its CRC-32
    with pytest.raises(CheckpointError, match="could not be unpacked"):
        import_joeynmt_zip(bytes(raw), "m.zip")


def test_a_name_another_process_is_writing_is_refused(tmp_path):
    folder = write_joey_folder(tmp_path / "m")
    (tmp_path / "models").mkdir()
    lock = name_lock(tmp_path / "models", "taken")
    fd = hold_lock(lock)  # as a training in the app or the CLI holds it
    try:
        _one_line(_import(tmp_path, str(folder), "--out", "taken"), "another attnviz process is writing")
    finally:
        release_lock(lock, fd)
    assert not (tmp_path / "models" / "taken.safetensors").exists()
    assert _import(tmp_path, str(folder), "--out", "taken").returncode == 0
