"""The folder settings and the shipped manifest are untrusted: a symlink loop, a manifest that is a
pipe, a device, a folder, a huge or sparse file, or bytes that are not UTF-8 each give one error
naming the setting or the file, before anything is read."""

from __future__ import annotations

import json
import os

import pytest

from attnviz.errors import CheckpointError, ConfigError
from attnviz.store import models_dir, pretrained_dir, read_manifest
from attnviz.store.paths import MAX_MANIFEST_BYTES
from tests.support.cli import run

ENTRY = {"name": "m", "file": "m.safetensors", "task": "toy-fr"}


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """An empty ``ATTNVIZ_PRETRAINED`` folder (no manifest yet) and an empty models folder."""
    folder = tmp_path / "shipped"
    folder.mkdir()
    monkeypatch.setenv("ATTNVIZ_PRETRAINED", str(folder))
    monkeypatch.setenv("ATTNVIZ_MODELS", str(tmp_path / "models"))
    return folder


@pytest.fixture
def loop(tmp_path):
    """Two links that point at each other."""
    (tmp_path / "loopa").symlink_to(tmp_path / "loopb")
    (tmp_path / "loopb").symlink_to(tmp_path / "loopa")
    return tmp_path / "loopa"


FOLDERS = [("ATTNVIZ_MODELS", models_dir), ("ATTNVIZ_PRETRAINED", pretrained_dir)]


@pytest.mark.parametrize(("setting", "folder"), FOLDERS)
def test_a_folder_setting_in_a_symlink_loop_is_a_config_error_naming_it(monkeypatch, loop, setting, folder):
    monkeypatch.setenv(setting, str(loop))
    with pytest.raises(ConfigError, match=rf"^{setting}: {loop} is not a usable folder \(.*\); point {setting} at"):
        folder()


def test_list_with_a_models_folder_in_a_symlink_loop_says_so_in_one_line(capsys, monkeypatch, loop):
    monkeypatch.setenv("ATTNVIZ_MODELS", str(loop))
    code, _, err = run(capsys, "list")
    assert code == 2 and "Traceback" not in err and "ATTNVIZ_MODELS" in err and len(err.splitlines()) == 1


def test_no_manifest_means_nothing_shipped_and_a_byte_order_mark_is_read(shipped):
    assert read_manifest() == []
    (shipped / "manifest.json").write_bytes(b"\xef\xbb\xbf" + json.dumps({"models": [ENTRY]}).encode())
    assert [entry["name"] for entry in read_manifest()] == ["m"]


@pytest.mark.parametrize("text", [b'{"models": [], "x": "caf\xe9"}', '{"models": []}'.encode("utf-16")])
def test_a_manifest_that_is_not_utf8_is_malformed(shipped, text):
    (shipped / "manifest.json").write_bytes(text)
    with pytest.raises(CheckpointError, match=r"manifest.json is malformed \(UnicodeDecodeError: .*restore it"):
        read_manifest()


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_a_manifest_that_is_not_a_regular_file_is_refused_unread(shipped, kind):
    path = shipped / "manifest.json"
    {"fifo": os.mkfifo, "device": lambda p: p.symlink_to("/dev/zero"), "folder": os.mkdir}[kind](path)
    said = r"a folder, not a manifest" if kind == "folder" else r"not a regular file but a pipe or a device"
    with pytest.raises(CheckpointError, match=rf"manifest\.json is {said}; restore it from git"):
        read_manifest()  # a pipe with no writer would block here, /dev/zero fill memory


def test_a_sparse_manifest_over_the_limit_is_refused_unread(shipped, monkeypatch):
    path = shipped / "manifest.json"
    with path.open("wb") as f:
        f.truncate(2 * 2**30)  # 2 GB of holes: reading it would take 2 GB
    monkeypatch.setattr("pathlib.Path.open", lambda *a, **k: pytest.fail("read a file over the limit"))
    with pytest.raises(CheckpointError, match=rf"over the {MAX_MANIFEST_BYTES // 2**20} MB a manifest may take"):
        read_manifest()


def test_the_shipped_manifest_is_far_below_the_limit():
    manifest = pretrained_dir() / "manifest.json"
    assert manifest.stat().st_size * 10 < MAX_MANIFEST_BYTES
