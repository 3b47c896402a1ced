"""Hostile Hugging Face folders through ``attnviz hf``: whatever the folder's files say ends in one
line and exit 2, and a config that describes more weights than the folder holds is refused before
transformers allocates them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from tests.support.hf_models import marian_folder

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def marian(tmp_path_factory):
    return marian_folder(tmp_path_factory.mktemp("hf") / "marian")


def _edit(marian: Path, folder: Path, config=None, files: dict | None = None) -> Path:
    shutil.copytree(marian, folder)
    if config is not None:
        c = json.loads((folder / "config.json").read_text())
        new = config(c)
        (folder / "config.json").write_text(new if isinstance(new, str) else json.dumps(c))
    for name, write in (files or {}).items():
        write(folder / name)
    return folder


def _hf(folder: Path, limit_gb: int = 4) -> subprocess.CompletedProcess:
    def limit():  # an allocation the size of a huge config fails at once instead of filling the machine
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit_gb << 30, limit_gb << 30))

    command = [sys.executable, "-m", "attnviz", "hf", str(folder), "hello"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT, preexec_fn=limit, env=env)


def _bomb(c: dict) -> None:
    c.update(
        d_model=1024,
        encoder_layers=100,
        decoder_layers=100,
        encoder_ffn_dim=4096,
        decoder_ffn_dim=4096,
        encoder_attention_heads=8,
        decoder_attention_heads=8,
    )


CASES = {
    "huge-config-one-stored-weight": (
        _bomb,
        {"model.safetensors": lambda p: save_file({"dummy": torch.zeros(1)}, p)},
        "config.json describes 2,939,606,016 weights but the safetensors files hold 1",
    ),
    "garbage-safetensors": (
        None,
        {"model.safetensors": lambda p: p.write_bytes(b"garbage" * 10)},
        "model.safetensors: not a safetensors file",
    ),
    "config-nested-past-the-parser": (
        lambda c: '{"model_type": "marian", "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
        None,
        "config.json nests more than 32 levels",
    ),
    "is_encoder_decoder-a-string": (lambda c: c.update(d_model="16"), None, "expected int, got str"),
    "zero-heads": (lambda c: c.update(decoder_attention_heads=0), None, "cannot build as a text encoder-decoder"),
    "generation-config-without-start-token": (
        None,
        {"generation_config.json": lambda p: p.write_text(json.dumps({"max_length": 10**9, "num_beams": 10**6}))},
        "the model's generation settings do not work",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_folder_is_one_line(marian, tmp_path, case):
    config, files, message = CASES[case]
    proc = _hf(_edit(marian, tmp_path / case, config, files))
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert message in proc.stderr


def test_the_folder_it_was_saved_as_still_translates(marian):
    proc = _hf(marian)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("translation: ")
