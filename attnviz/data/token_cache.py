"""Tokens of a corpus kept on disk, so that a corpus read again is not tokenized again.

A cache file holds the tokens of one list of texts (one side of one split) cut by one tokenizer.
Its name is a hash of the texts themselves, the tokenizer's settings, ``tokenize.VERSION`` and
Python's Unicode version: an edited corpus file, or a tokenizer that cuts differently, misses and
is tokenized afresh. A file is written to a temporary file in the same folder, synced and renamed
into place, so a reader sees a whole file or none; it ends with the length and SHA-256 of its
contents, so a torn or altered file is never used, only rebuilt.

The folder is ``$ATTNVIZ_CORPUS_CACHE``, else ``$XDG_CACHE_HOME/attnviz/corpora``
(``~/.cache/attnviz/corpora``), read at each call; it may be deleted at any time. When it cannot
be written, texts are tokenized on every read.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
import time
import unicodedata
from collections.abc import Sequence
from pathlib import Path

from attnviz.data.tokenize import VERSION, Tokenizer
from attnviz.errors import ConfigError, setting_folder

CACHE_ENV = "ATTNVIZ_CORPUS_CACHE"
MAGIC = b"attnviz tokens 1\n"  # the file layout's version: a new layout gets a new magic
_FOOTER = struct.Struct("<QQ32s")  # payload bytes, texts, SHA-256 of the payload
_TOKEN_SEP, _TEXT_SEP = "\x1f", "\x1e"  # control characters, which clean_text leaves in no token
STALE_TEMP_SECONDS = 3600.0  # a temporary file this old was left by a killed writer
# the package's shipped models: in a checkout a link to pretrained/, in a wheel the copy it installs
_SHIPPED = (Path(__file__).resolve().parents[1] / "shipped-models").resolve()


def cache_dir() -> Path | None:
    """The cache folder (see the module docstring); None when there is no home folder to hold it.
    Raises :class:`ConfigError` for a folder inside the shipped models' folder."""
    if env := os.environ.get(CACHE_ENV):
        folder = Path(env).expanduser()
    else:
        try:
            base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        except RuntimeError:  # no home folder
            return None
        folder = base / "attnviz" / "corpora"
    folder = setting_folder(folder, CACHE_ENV)
    pretrained = os.environ.get("ATTNVIZ_PRETRAINED")
    shipped = [_SHIPPED, *([setting_folder(pretrained, "ATTNVIZ_PRETRAINED")] if pretrained else [])]
    for models in shipped:
        if folder.is_relative_to(models):
            raise ConfigError(
                f"{CACHE_ENV}={folder} lies inside {models}, the shipped models' folder, which attnviz never "
                f"writes to; point {CACHE_ENV} at another folder or unset it."
            )
    return folder


def tokenize_texts(texts: Sequence[str], tokenizer: Tokenizer) -> list[list[str]]:
    """``[tokenizer.tokenize(text) for text in texts]``, read from the cache when it holds them,
    else tokenized and stored there."""
    folder = cache_dir()
    if folder is None:
        return [tokenizer.tokenize(text) for text in texts]
    path = folder / f"{_key(texts, tokenizer)}.tokens"
    tokens = read_tokens(path, len(texts))
    if tokens is None:
        tokens = [tokenizer.tokenize(text) for text in texts]
        write_tokens(path, tokens)
    return tokens


def _key(texts: Sequence[str], tokenizer: Tokenizer) -> str:
    how = json.dumps([VERSION, unicodedata.unidata_version, tokenizer.to_dict()], sort_keys=True)
    digest = hashlib.sha256(how.encode())
    digest.update(json.dumps(list(texts), ensure_ascii=False).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _parse(text: str, n: int) -> list[list[str]] | None:
    parts = text.split(_TEXT_SEP) if n else []
    return [part.split(_TOKEN_SEP) if part else [] for part in parts] if len(parts) == n else None


def read_tokens(path: Path, n: int) -> list[list[str]] | None:
    """The ``n`` token lists stored in ``path``; None when it is missing, torn, altered or holds
    another number of texts."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) < len(MAGIC) + _FOOTER.size or not data.startswith(MAGIC):
        return None
    size, count, digest = _FOOTER.unpack_from(data, len(data) - _FOOTER.size)
    payload = data[len(MAGIC) : len(data) - _FOOTER.size]
    if size != len(payload) or count != n or hashlib.sha256(payload).digest() != digest:
        return None
    try:
        return _parse(payload.decode("utf-8"), n)
    except UnicodeDecodeError:
        return None


def write_tokens(path: Path, tokens: list[list[str]]) -> bool:
    """Store ``tokens`` in ``path`` whole or not at all (temporary file, fsync, rename); False when
    the folder cannot be written or the tokens hold a separator of the file's layout."""
    text = _TEXT_SEP.join(_TOKEN_SEP.join(line) for line in tokens)
    if _parse(text, len(tokens)) != tokens:
        return False
    try:
        payload = text.encode("utf-8")
        path.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temps(path.parent)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(MAGIC + payload + _FOOTER.pack(len(payload), len(tokens), hashlib.sha256(payload).digest()))
                f.flush()
                os.fsync(f.fileno())
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except (OSError, UnicodeEncodeError):
        return False
    return True


def _remove_stale_temps(folder: Path) -> None:
    """Delete the temporary files that writers killed before their rename left behind."""
    for temp in folder.glob(".*.tmp"):
        try:
            if time.time() - temp.stat().st_mtime > STALE_TEMP_SECONDS:
                temp.unlink()
        except OSError:
            continue
