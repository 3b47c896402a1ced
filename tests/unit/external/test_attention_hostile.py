"""Hostile attention files through the command line: JSON nested past any use and NPZ arrays whose
headers claim more than the file holds or more than attnviz reads end in one line and exit 2,
without reading the array."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from attnviz.errors import DataError
from attnviz.external import read_attention

ROOT = Path(__file__).resolve().parents[3]
GOOD = {"source_tokens": ["a", "b", "</s>"], "target_tokens": ["x", "</s>"], "weights": [[0.5, 0.5, 0], [0, 0, 1]]}


def _attention(*files: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "attnviz", "attention", *map(str, files)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)


def _npy(shape: tuple, payload: bytes) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": "<f8", "fortran_order": False, "shape": shape})
    return buffer.getvalue() + payload


@pytest.mark.parametrize(
    "text",
    [
        '{"source_tokens": ["a"], "target_tokens": ["b"], "weights": ' + "[" * 100_000 + "]" * 100_000 + "}",
        json.dumps({**GOOD, "metadata": {"a": "x"}}).replace('"x"', "[" * 100_000 + "]" * 100_000),
        json.dumps(GOOD)[:-1] + ', "scores": ' + "[" * 900 + "]" * 900 + "}",
    ],
    ids=["weights-past-the-parser", "metadata-past-the-parser", "scores-900-deep"],
)
def test_deeply_nested_json_is_one_line(tmp_path, text):
    path = tmp_path / "deep.json"
    path.write_text(text)
    proc = _attention(path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "nested more than 32 levels" in proc.stderr


def test_npz_metadata_nested_past_the_parser_is_refused():
    buffer = io.BytesIO()
    np.savez(
        buffer,
        source_tokens=np.array(["a"]),
        target_tokens=np.array(["x"]),
        weights=np.ones((1, 1)),
        metadata=np.array("[" * 100_000 + "]" * 100_000),
    )
    with pytest.raises(DataError, match="field 'metadata' is JSON nested more than 32 levels"):
        read_attention(buffer.getvalue(), "m.npz")


def test_an_npz_header_claiming_80_gb_is_refused_before_any_allocation(tmp_path):
    path = tmp_path / "lie.npz"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("weights.npy", _npy((100_000, 100_000), bytes(800)))
    proc = _attention(path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "field 'weights' has shape (100000, 100000), more than the 20000000 values attnviz reads" in proc.stderr


def test_an_npz_header_claiming_more_than_its_member_holds_is_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("weights.npy", _npy((1000, 1000), bytes(800)))
    with pytest.raises(DataError, match=r"field 'weights' says shape \(1000, 1000\) but holds fewer values"):
        read_attention(buffer.getvalue(), "short.npz")


def test_a_compressed_npz_still_reads():
    buffer = io.BytesIO()
    np.savez_compressed(
        buffer,
        source_tokens=np.array(["a", "b"]),
        target_tokens=np.array(["x"]),
        weights=np.array([[0.25, 0.75]]),
        metadata=np.array('{"toolkit": "fairseq"}'),
    )
    read = read_attention(buffer.getvalue(), "ok.npz")
    assert read.metadata == {"toolkit": "fairseq"} and read.alignments["attention"].weights.shape == (1, 2)
