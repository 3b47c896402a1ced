"""Exceptions that attnviz raises for user mistakes, and the base class of its warnings.

Every message says what went wrong and how to fix it. The CLI prints them as one line and
exits 2; the app shows them with ``st.error``. Anything else escaping is a bug.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path


class AttnvizError(ValueError):
    """Base class of every error caused by input rather than by a bug."""


class AttnvizWarning(UserWarning):
    """Base class of attnviz's own warnings (:class:`~attnviz.store.ModelWarning`,
    :class:`~attnviz.devices.DeviceWarning`): ``warnings.filterwarnings("ignore", category=AttnvizWarning)``
    silences them all; a deprecated keyword warns as Python's DeprecationWarning."""


class InputError(AttnvizError):
    """Text or arguments a model cannot take (empty, too long, out of range)."""


class DataError(AttnvizError):
    """A data file or folder that cannot be read as pairs (names the file and line)."""


class CheckpointError(AttnvizError):
    """A checkpoint that is missing, corrupt, foreign, unsafe or made for another version."""


class ConfigError(AttnvizError):
    """A configuration value that is unknown or out of range."""


_JSON_KINDS = {  # an annotation's part -> the JSON values it takes, and how a message names them
    "int": (int, "a whole number"),
    "float": ((int, float), "a number"),
    "bool": (bool, "true or false"),
    "str": (str, "a string"),
    "dict": (dict, "an object {...}"),
    "None": (type(None), "null"),
}


def counted(n: int, noun: str) -> str:
    """``1 line``, ``2 lines``: a count in a message, its noun singular for one."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def check_json_types(values: dict, annotations: dict[str, str], owner: str = "") -> None:
    """Refuse a value read from JSON whose type its annotation (``"int"``, ``"float | None"``, ...)
    does not allow, naming it, so a recipe's ``"lr": "fast"`` is a :class:`ConfigError`, not a
    TypeError deep in training. bool is not a number here, though Python counts it as an int."""
    for name, value in values.items():
        parts = [part.strip() for part in annotations[name].split("|")]
        kinds = [_JSON_KINDS[part] for part in parts if part in _JSON_KINDS]
        if len(kinds) != len(parts):
            continue  # a type JSON cannot hold alone (a list, a union of those): its reader checks it
        ok = any(
            isinstance(value, kind) and (part == "bool" or not isinstance(value, bool))
            for (kind, _), part in zip(kinds, parts, strict=True)
        )
        if not ok:
            wanted = " or ".join(noun for _, noun in kinds)
            raise ConfigError(f"{owner}{name} must be {wanted}, got {value!r} ({type(value).__name__})")


def check_field_types(config: object) -> None:
    """:func:`check_json_types` over a dataclass's fields (a config read back from JSON)."""
    values = {f.name: getattr(config, f.name) for f in fields(config)}
    check_json_types(values, {f.name: f.type for f in fields(config)})


_URL_SCHEMES = ("http://", "https://", "ftp://", "file://", "s3://", "gs://", "hf://")


def check_int(value: object, name: str, low: int, high: int | None = None, error: type | None = None) -> None:
    """Refuse ``value`` unless it is a whole number (not a bool) from ``low`` to ``high`` (no upper
    bound when None), with a message naming ``name``; ``error`` is the class raised (InputError)."""
    error = error or InputError
    whole = isinstance(value, int) and not isinstance(value, bool)
    if whole and value >= low and (high is None or value <= high):
        return
    bound = f"between {low} and {high}" if high is not None else f"{low} or more"
    shown = repr(value) if not whole else value
    raise error(f"{name} must be a whole number {bound}, got {shown}")


def check_many(value: object, what: str, one: str = "") -> None:
    """Refuse one string (or bytes, or None) where a list of ``what`` is asked: iterated, a string gives its
    characters, and a call that took one sentence or name for a list measured or aligned characters.
    ``one`` names the call for a single item, if there is one."""
    if value is None or isinstance(value, str | bytes):
        given = "None" if value is None else f"one {type(value).__name__} ({str(value)[:40]!r})"
        raise InputError(f"give a list of {what}, not {given}" + (f"; for one, use {one}" if one else ""))


def refuse_url(given: str, what: str) -> None:
    """Refuse a URL where a local path is read: attnviz downloads nothing, so say so rather than
    report a mangled path (``https:/host/...``) as missing. ``what`` names the thing, e.g. "a data file"."""
    if given.strip().lower().startswith(_URL_SCHEMES):
        raise InputError(
            f"{given[:80]!r} is a URL; attnviz reads {what} from this machine only and downloads nothing: "
            "download it first and give its local path"
        )


def resolved(path: str | Path, setting: str = "") -> Path:
    """``path`` absolute with its links followed, or :class:`ConfigError` for a symlink loop or an
    unreadable link (Python 3.11 and 3.12 raise RuntimeError there); ``setting`` names where the path
    came from (``--out``, ``ATTNVIZ_MODELS``)."""
    try:
        return Path(path).expanduser().resolve()
    except (OSError, RuntimeError):
        where = f"{setting} " if setting else ""
        raise ConfigError(f"{where}{str(path)[:200]!r} is a symlink loop or an unreadable link; remove it") from None


def setting_folder(path: str | Path, setting: str) -> Path:
    """``path``, a folder named by the environment variable ``setting``, made absolute; a symlink loop
    (Python 3.11's RuntimeError) or an unknown ``~user`` is a ConfigError naming the variable. Every
    reader of a folder setting asks this, so a setting reads the same wherever it is read."""
    try:
        return Path(path).expanduser().resolve()
    except (RuntimeError, OSError) as e:
        raise ConfigError(f"{setting}: {path} is not a usable folder ({e}); point {setting} at a folder") from None
