"""A model folder uploaded as a zip: unpacked once, safely, or refused in one message."""

from __future__ import annotations

import io
import stat
import zipfile

import pytest

from attnviz.errors import DataError
from attnviz.external import folder as folder_module
from attnviz.external import model_root, unpack_zip


def _zip(files: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            z.writestr(info, target)
    return buf.getvalue()


def test_a_zipped_folder_unpacks_once_and_gives_its_model_folder(tmp_path):
    data = _zip({"opus-mt/config.json": b"{}", "opus-mt/model.safetensors": b"x", "opus-mt/sub/vocab.json": b"{}"})
    root = unpack_zip(data, tmp_path)
    assert root.name == "opus-mt" and (root / "sub" / "vocab.json").read_bytes() == b"{}"
    assert unpack_zip(data, tmp_path) == root  # the same bytes: the same folder, not unpacked again
    flat = unpack_zip(_zip({"config.json": b"{}"}), tmp_path)
    assert model_root(flat) == flat and not list(tmp_path.glob("*.partial"))


@pytest.mark.parametrize(
    ("files", "links", "message"),
    [
        ({"../evil.txt": b"x", "config.json": b"{}"}, None, "outside the folder"),
        ({"/etc/evil": b"x"}, None, "outside the folder"),
        ({"config.json": b"{}"}, {"model.safetensors": "/etc/passwd"}, "link"),
        ({"readme.txt": b"x"}, None, "no config.json"),
        ({"a/config.json": b"{}", "b/config.json": b"{}"}, None, "several"),
    ],
)
def test_unsafe_or_wrong_zips_are_refused(tmp_path, files, links, message):
    with pytest.raises(DataError, match=message):
        unpack_zip(_zip(files, links), tmp_path / "out")
    assert not (tmp_path / "evil.txt").exists()


def test_not_a_zip_too_big_and_a_bomb_are_refused(tmp_path, monkeypatch):
    with pytest.raises(DataError, match="not a zip"):
        unpack_zip(b"plain text", tmp_path)
    monkeypatch.setattr(folder_module, "MAX_ZIP_MB", 0.001)
    with pytest.raises(DataError, match="limit is"):
        unpack_zip(b"x" * 2000, tmp_path)
    monkeypatch.setattr(folder_module, "MAX_ZIP_MB", 50)
    monkeypatch.setattr(folder_module, "MAX_UNPACKED_MB", 1)
    bomb = _zip({"config.json": b"{}", "model.safetensors": b"\0" * 3_000_000})  # a few kB zipped
    with pytest.raises(DataError, match="more than 1 MB"):
        unpack_zip(bomb, tmp_path)
    assert not [p for p in tmp_path.iterdir()]  # nothing left behind
    monkeypatch.setattr(folder_module, "MAX_FILES", 2)
    with pytest.raises(DataError, match="3 files"):
        unpack_zip(_zip({"config.json": b"{}", "a": b"", "b": b""}), tmp_path)


def test_a_name_over_the_file_systems_limit_is_one_error(tmp_path):
    with pytest.raises(DataError, match=r"could not be unpacked.*File name too long"):
        unpack_zip(_zip({"x" * 300: b"x", "config.json": b"{}"}), tmp_path)
    assert not list(tmp_path.iterdir())  # the partial folder is removed


def test_an_encrypted_member_is_one_error(tmp_path):
    raw = bytearray(_zip({"config.json": b"{}"}))
    for header, flags_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):  # the encryption bit in both headers
        raw[raw.find(header) + flags_at] |= 1
    with pytest.raises(DataError, match=r"could not be unpacked.*encrypted"):
        unpack_zip(bytes(raw), tmp_path)
