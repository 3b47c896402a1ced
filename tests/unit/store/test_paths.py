"""The folder settings and the shipped manifest are untrusted: a symlink loop, a manifest that is a
pipe, a device, a folder, a huge or sparse file, or bytes that are not UTF-8 each give one error
naming the setting or the file, before anything is read. An installed package (no checkout) keeps
users' models under ``$XDG_DATA_HOME``, else ``~/.local/share``, and reads its own shipped models."""

from __future__ import annotations

import json
import os

import pytest

from attnviz.errors import CheckpointError, ConfigError
from attnviz.store import models_dir, pretrained_dir, read_manifest
from attnviz.store.paths import MAX_MANIFEST_BYTES, PACKAGED_MODELS
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


@pytest.fixture
def installed(monkeypatch):
    """attnviz as an installed package: no checkout around it, no ATTNVIZ_MODELS nor XDG_DATA_HOME."""
    monkeypatch.setattr("attnviz.store.paths.checkout_dir", lambda: None)
    monkeypatch.delenv("ATTNVIZ_MODELS", raising=False)
    monkeypatch.delenv("ATTNVIZ_PRETRAINED", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)


def test_an_installed_package_keeps_models_under_xdg_data_home(installed, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert models_dir() == (tmp_path / "data" / "attnviz" / "models").resolve()


def test_without_xdg_data_home_models_go_under_the_home_folder(installed, monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert models_dir() == (tmp_path / "home" / ".local" / "share" / "attnviz" / "models").resolve()
    monkeypatch.setenv("ATTNVIZ_MODELS", str(tmp_path / "mine"))  # the setting still wins
    assert models_dir() == (tmp_path / "mine").resolve()


def test_an_installed_package_reads_its_own_shipped_models(installed):
    assert pretrained_dir() == PACKAGED_MODELS


def test_an_xdg_data_home_in_a_symlink_loop_names_that_setting(installed, monkeypatch, loop):
    monkeypatch.setenv("XDG_DATA_HOME", str(loop))
    with pytest.raises(ConfigError, match=r"^XDG_DATA_HOME: .* is not a usable folder \(.*\); point XDG_DATA_HOME at"):
        models_dir()
