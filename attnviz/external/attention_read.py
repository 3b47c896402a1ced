"""An attention file's bytes as Python values, before any field is interpreted: strict JSON (finite
numbers only, at most :data:`~attnviz.store.MAX_DEPTH` levels deep) and NPZ arrays (read with
``allow_pickle=False``, each array's header checked against :data:`MAX_CELLS` and against the bytes
its archive member holds before anything is read, so a compressed bomb unpacks nothing)."""

from __future__ import annotations

import io
import json
import zipfile
from typing import NoReturn

import numpy as np

from attnviz.errors import DataError
from attnviz.store import MAX_DEPTH, too_deep

MAX_CELLS = 20_000_000  # over all matrices of a file
NPZ_KEYS = {"format", "version", "metadata", "names", "name", "source_tokens", "target_tokens", "weights", "scores"}


def strict_json(text: str, name: str, field: str | None = None) -> object:
    """``text`` (the file ``name``, or its ``field``) parsed as JSON without NaN or Infinity and at most
    :data:`MAX_DEPTH` levels deep."""
    where = f"{name}: field {field!r} is" if field else f"{name}:"
    deep = False
    try:
        obj = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise DataError(f"{where} not valid JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    except ValueError as e:
        raise DataError(f"{name}: field {field!r}: {e}" if field else f"{name}: {e}") from None
    except RecursionError:  # deeper than the parser goes
        deep = True
    if deep or too_deep(obj):
        raise DataError(f"{where} JSON nested more than {MAX_DEPTH} levels deep; an attention file needs at most 8")
    return obj


def _no_constant(word: str) -> NoReturn:
    raise ValueError(f"{word} is not allowed: every value must be a finite number (write null for a masked score)")


def _check_npz_sizes(data: bytes, name: str) -> None:
    """Every array's header read before its data: at most :data:`MAX_CELLS` values, and no more than the
    archive member holds (zipfile stops at a member's recorded size, so nothing unpacks beyond these)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                if not info.filename.endswith(".npy"):
                    continue  # named as an unknown field once the archive is read
                key = info.filename.removesuffix(".npy")
                with archive.open(info) as member:
                    version = np.lib.format.read_magic(member)
                    read = (
                        np.lib.format.read_array_header_1_0
                        if version == (1, 0)
                        else np.lib.format.read_array_header_2_0
                    )
                    shape, _, dtype = read(member)
                    header = member.tell()
                count = int(np.prod(shape, dtype=object))
                if count > MAX_CELLS:
                    raise DataError(
                        f"{name}: field {key!r} has shape {shape}, more than the {MAX_CELLS} values attnviz reads"
                    )
                if not dtype.hasobject and header + count * dtype.itemsize > info.file_size:
                    raise DataError(f"{name}: field {key!r} says shape {shape} but holds fewer values; save it again")
    except DataError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, NotImplementedError) as e:
        raise DataError(f"{name}: not a readable NPZ archive ({' '.join(str(e).split())[:200]})") from None


def npz_fields(data: bytes, name: str) -> dict:
    _check_npz_sizes(data, name)
    try:
        archive = np.load(io.BytesIO(data), allow_pickle=False)
        names = archive.files
    except (ValueError, OSError, zipfile.BadZipFile) as e:
        raise DataError(f"{name}: not a readable NPZ archive ({e})") from None
    fields = {}
    for key in names:
        try:
            fields[key] = archive[key]
        except ValueError:
            raise DataError(
                f"{name}: field {key!r} is an object array, which needs pickle to read; save strings as a "
                "unicode array (np.array(tokens)) and numbers as floats"
            ) from None
    unknown = sorted(set(fields) - NPZ_KEYS)
    if unknown:
        raise DataError(f"{name}: unknown field {unknown[0]!r}; an NPZ file has {', '.join(sorted(NPZ_KEYS))}")
    for key in ("format", "version", "name"):
        if key in fields:
            if fields[key].ndim != 0 or fields[key].dtype.kind not in "Uiu":
                raise DataError(f"{name}: field {key!r} must be one string or number (a 0-d array)")
            fields[key] = fields[key].item()
    if "metadata" in fields:
        meta = fields["metadata"]
        if meta.dtype.kind != "U" or meta.ndim != 0:
            raise DataError(f"{name}: field 'metadata' must be one JSON string (np.array(json.dumps(meta)))")
        fields["metadata"] = strict_json(str(meta), name, "metadata")
    return fields
