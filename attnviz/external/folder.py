"""A model folder uploaded as a zip, unpacked safely: regular files only (no links, no devices), every
path inside the destination (no absolute paths, no ``..``), a cap on the files and on the bytes
actually written (a zip's declared sizes can lie), and a folder that holds ``config.json``."""

from __future__ import annotations

import hashlib
import io
import shutil
import stat
import uuid
import zipfile
from pathlib import Path, PurePosixPath

from attnviz.errors import DataError

MAX_ZIP_MB = 50  # the upload itself (Streamlit's server.maxUploadSize is the same)
MAX_UNPACKED_MB = 200  # what it may unpack to
MAX_FILES = 200
_CHUNK = 1 << 20


def _member_path(info: zipfile.ZipInfo) -> PurePosixPath | None:
    """The member's relative path (``None``: a folder entry); DataError for a link or a path leaving the folder."""
    kind = stat.S_IFMT(info.external_attr >> 16)  # 0 where the zip records no Unix file type
    if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
        raise DataError(f"the zip holds {info.filename!r}, which is a link or a device; zip the plain files only")
    name = info.filename.replace("\\", "/")
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or (path.parts and ":" in path.parts[0]):
        raise DataError(f"the zip holds {info.filename!r}, a path outside the folder; zip the folder's own files")
    return None if info.is_dir() or name.endswith("/") else path


def model_root(folder: Path) -> Path:
    """The folder that holds ``config.json``: ``folder`` itself or its one subfolder (a zip of the folder)."""
    if (folder / "config.json").is_file():
        return folder
    found = sorted(p.parent for p in folder.glob("*/config.json"))
    if len(found) == 1:
        return found[0]
    raise DataError(
        "the zip holds no config.json"
        + (" at its top or in one folder" if not found else " in one place but several")
        + "; zip the model folder (config.json, model.safetensors and the tokenizer files)"
    )


def unpack_zip(data: bytes, parent: Path) -> Path:
    """Unpack the zip ``data`` into ``parent/<content hash>`` (once: the same bytes reuse the folder)
    and return the model folder in it (:func:`model_root`). DataError for an unsafe or oversized zip."""
    if len(data) > MAX_ZIP_MB * 1_000_000:
        raise DataError(
            f"the zip is {len(data) / 1e6:.0f} MB; the limit is {MAX_ZIP_MB} MB. For a bigger model give the "
            "folder's path on the server instead"
        )
    dest = parent / hashlib.sha256(data).hexdigest()[:16]
    if dest.is_dir():
        return model_root(dest)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise DataError("the upload is not a zip file; zip the model folder (zip -r model.zip FOLDER)") from None
    members = [(info, _member_path(info)) for info in archive.infolist()]
    files = [(info, path) for info, path in members if path is not None]
    if len(files) > MAX_FILES:
        raise DataError(f"the zip holds {len(files)} files; a model folder has a few (the limit is {MAX_FILES})")
    partial = dest.with_name(f"{dest.name}.{uuid.uuid4().hex}.partial")  # another session may unpack the same zip
    budget = MAX_UNPACKED_MB * 1_000_000
    try:
        for info, path in files:
            target = partial.joinpath(*path.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(info) as source, open(target, "xb") as out:
                while chunk := source.read(_CHUNK):
                    budget -= len(chunk)
                    if budget < 0:
                        raise DataError(
                            f"the zip unpacks to more than {MAX_UNPACKED_MB} MB; give the folder's path on "
                            "the server instead"
                        )
                    out.write(chunk)
        try:
            partial.rename(dest)
        except OSError:
            if not dest.is_dir():
                raise
    except (zipfile.BadZipFile, EOFError, OSError, NotImplementedError, RuntimeError) as e:  # RuntimeError: encrypted
        reason = e.strerror if isinstance(e, OSError) and e.strerror else e  # an OSError's text names the server path
        raise DataError(f"the zip could not be unpacked ({reason}); zip the folder again") from None
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return model_root(dest)
