"""Where attnviz's files live: the shipped models, the user's models folder, the manifest.

Each folder comes from an environment variable when it is set, so an installed package and a
checkout behave alike and nothing depends on the working directory:

* ``ATTNVIZ_PRETRAINED``: the shipped models (``pretrained/`` with ``manifest.json`` and
  ``recipes/``). Default: ``pretrained/`` of the checkout the package runs from, or for an
  installed package its ``shipped-models/`` folder: the built-in tasks' models and the manifest of
  every shipped model (the Multi30k models are not in the wheel; :func:`absent_models`).
* ``ATTNVIZ_MODELS``: the models users train or copy in. Default: ``models/`` of the checkout,
  or ``$XDG_DATA_HOME/attnviz/models`` (``~/.local/share/attnviz/models``) for an installed
  package that runs outside a checkout.

The functions read the variables at each call, so a test or a server can point them elsewhere.
"""

from __future__ import annotations

import json
import os
import stat
import warnings
from pathlib import Path

from attnviz.data import user_temp
from attnviz.errors import AttnvizError, AttnvizWarning, CheckpointError, counted, setting_folder
from attnviz.store.header import clean_manifest
from attnviz.version import package_version  # noqa: F401 (the store's public name for it)

SUFFIX = ".safetensors"  # every attnviz checkpoint
PACKAGE_DIR = Path(__file__).resolve().parents[1]
PACKAGED_MODELS = PACKAGE_DIR / "shipped-models"  # in a checkout a link to pretrained/; in a wheel a copy of part of it
MAX_MANIFEST_BYTES = 4 * 2**20  # far above the shipped manifest; a larger file is not one


def upload_root() -> Path:
    """Where the app keeps uploaded data files (one folder per server process below it): the user's
    own ``$TMPDIR/attnviz-uploads-<user>``, so servers of different users on one machine never share it."""
    return user_temp("attnviz-uploads")


def data_roots() -> list[Path]:
    """The folders a checkpoint's stored data file may lie in and still be read back: the models
    folder and the app's uploads. A checkpoint naming a file anywhere else is not trusted."""
    return [models_dir(), upload_root()]


def hf_roots() -> list[Path]:
    """The folders under which the app opens a Hugging Face model folder by its path on the server:
    the models folder and each folder of ``$ATTNVIZ_HF_FOLDERS`` (separated by ``os.pathsep``). The
    command line opens any folder its user can read."""
    given = os.environ.get("ATTNVIZ_HF_FOLDERS", "").split(os.pathsep)
    extra = [setting_folder(p, "ATTNVIZ_HF_FOLDERS") for p in given if p]
    return [models_dir(), *extra]


def checkout_dir() -> Path | None:
    """The repository the package runs from (it holds ``pretrained/`` and ``app.py``), or None
    for a package installed into site-packages."""
    root = PACKAGE_DIR.parent
    return root if (root / "pretrained").is_dir() and (root / "app.py").is_file() else None


def pretrained_dir() -> Path:
    """The shipped models' folder: ``$ATTNVIZ_PRETRAINED``, else the checkout's ``pretrained/``,
    else the installed package's own (:data:`PACKAGED_MODELS`)."""
    if env := os.environ.get("ATTNVIZ_PRETRAINED"):
        return setting_folder(env, "ATTNVIZ_PRETRAINED")
    root = checkout_dir()
    return root / "pretrained" if root is not None else PACKAGED_MODELS


def models_dir() -> Path:
    """The folder for models trained by users: ``$ATTNVIZ_MODELS``, else the checkout's
    ``models/``, else ``$XDG_DATA_HOME/attnviz/models``."""
    if env := os.environ.get("ATTNVIZ_MODELS"):
        return setting_folder(env, "ATTNVIZ_MODELS")
    root = checkout_dir()
    if root is not None:
        return root / "models"
    xdg = os.environ.get("XDG_DATA_HOME")
    data_home = Path(xdg or Path.home() / ".local" / "share")
    return setting_folder(data_home / "attnviz" / "models", "XDG_DATA_HOME" if xdg else "ATTNVIZ_MODELS")


def manifest_path() -> Path:
    """``manifest.json`` of the shipped models."""
    return pretrained_dir() / "manifest.json"


class ModelWarning(AttnvizWarning):
    """A file in the models folder that is skipped (broken link, outside the folder, unreadable),
    or an entry of the manifest that is malformed."""


def read_manifest() -> list[dict]:
    """The shipped models' manifest entries (empty when nothing is shipped); a malformed entry
    is skipped with a :class:`ModelWarning`."""
    path = manifest_path()
    raw = read_regular_file(path, MAX_MANIFEST_BYTES, "manifest", "restore it from git", CheckpointError, True)
    if raw is None:
        return []
    try:
        data = json.loads(raw.decode("utf-8-sig"))  # a byte-order mark from an editor is harmless
        entries = data["models"]
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, RecursionError) as e:
        raise CheckpointError(f"{path} is malformed ({type(e).__name__}: {e}); restore it from git") from e
    kept, skipped = clean_manifest(entries, path.name)
    for line in skipped:
        warnings.warn(line, ModelWarning, stacklevel=2)
    return kept


def read_regular_file(
    path: Path, limit: int, what: str, advice: str, error: type[AttnvizError], missing_ok: bool = False
) -> bytes | None:
    """The bytes of ``path``, a regular file of at most ``limit`` bytes. Its type and size are checked
    by ``stat`` before a byte is read (a pipe would block, a device or a sparse file fill memory); each
    problem raises ``error`` naming ``what`` and ending in ``advice``. A missing file is None with
    ``missing_ok``, else an error."""
    too_large = f"{path} is over the {limit / 2**20:g} MB a {what} may take; {advice}"
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise error(f"{path} is a folder, not a {what}; {advice}")
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{path} is not a regular file but a pipe or a device; {advice}")
        if info.st_size > limit:
            raise error(too_large)
        with path.open("rb") as f:
            data = f.read(limit + 1)
    except (FileNotFoundError, NotADirectoryError):
        if missing_ok:
            return None
        raise error(f"no {what} at {path}; {advice}") from None
    except OSError as e:  # no permission, a symlink loop
        raise error(f"cannot read {path} ({e.strerror}); {advice}") from None
    if len(data) > limit:  # it grew after the stat
        raise error(too_large)
    return data


def absent_models() -> list[dict]:
    """The manifest's entries whose checkpoint is not in :func:`pretrained_dir`: for an installed
    package the Multi30k models, which its wheel leaves out (over 100 MB). :func:`absent_hint`
    says how to get them."""
    folder = pretrained_dir()
    return [entry for entry in read_manifest() if not (folder / entry["file"]).is_file()]


def absent_hint(absent: list[dict]) -> str:
    """One line for users: which shipped models are not here and how to get them (empty when none)."""
    if not absent:
        return ""
    tasks = sorted({str(entry.get("task") or entry["name"]) for entry in absent})
    size = sum(entry.get("size_bytes") or 0 for entry in absent) / 1e6
    one = len(absent) == 1
    return (
        f"{counted(len(absent), 'shipped model')} ({', '.join(tasks)}; {size:.0f} MB) {'is' if one else 'are'} "
        f"not installed here. To use {'it' if one else 'them'}, name a copy of the repository's pretrained/ folder: "
        "`attnviz app --models DIR` (or ATTNVIZ_PRETRAINED=DIR)."
    )


def recipe_path(name: str) -> Path:
    """The recipe a shipped model was built from."""
    return pretrained_dir() / "recipes" / f"{name}.json"
