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
import tempfile
import warnings
from pathlib import Path

from attnviz.errors import CheckpointError
from attnviz.store.header import clean_manifest

SUFFIX = ".safetensors"  # every attnviz checkpoint
PACKAGE_DIR = Path(__file__).resolve().parents[1]
PACKAGED_MODELS = PACKAGE_DIR / "shipped-models"  # in a checkout a link to pretrained/; in a wheel a copy of part of it


def upload_root() -> Path:
    """Where the app keeps uploaded data files (one folder per server process below it)."""
    return Path(tempfile.gettempdir()) / "attnviz-uploads"


def data_roots() -> list[Path]:
    """The folders a checkpoint's stored data file may lie in and still be read back: the models
    folder and the app's uploads. A checkpoint naming a file anywhere else is not trusted."""
    return [models_dir(), upload_root()]


def hf_roots() -> list[Path]:
    """The folders under which the app opens a Hugging Face model folder by its path on the server:
    the models folder and each folder of ``$ATTNVIZ_HF_FOLDERS`` (separated by ``os.pathsep``). The
    command line opens any folder its user can read."""
    extra = [Path(p).expanduser().resolve() for p in os.environ.get("ATTNVIZ_HF_FOLDERS", "").split(os.pathsep) if p]
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
        return Path(env).expanduser().resolve()
    root = checkout_dir()
    return root / "pretrained" if root is not None else PACKAGED_MODELS


def models_dir() -> Path:
    """The folder for models trained by users: ``$ATTNVIZ_MODELS``, else the checkout's
    ``models/``, else ``$XDG_DATA_HOME/attnviz/models``."""
    if env := os.environ.get("ATTNVIZ_MODELS"):
        return Path(env).expanduser().resolve()
    root = checkout_dir()
    if root is not None:
        return root / "models"
    data_home = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return (data_home / "attnviz" / "models").resolve()


def manifest_path() -> Path:
    """``manifest.json`` of the shipped models."""
    return pretrained_dir() / "manifest.json"


class ModelWarning(UserWarning):
    """A file in the models folder that is skipped (broken link, outside the folder, unreadable),
    or an entry of the manifest that is malformed."""


def read_manifest() -> list[dict]:
    """The shipped models' manifest entries (empty when nothing is shipped); a malformed entry
    is skipped with a :class:`ModelWarning`."""
    path = manifest_path()
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        entries = data["models"]
    except (json.JSONDecodeError, KeyError, TypeError, RecursionError) as e:
        raise CheckpointError(f"{path} is malformed ({type(e).__name__}: {e}); restore it from git") from e
    kept, skipped = clean_manifest(entries, path.name)
    for line in skipped:
        warnings.warn(line, ModelWarning, stacklevel=2)
    return kept


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
    return (
        f"{len(absent)} shipped models ({', '.join(tasks)}; {size:.0f} MB) are not installed here. To use "
        "them, name a copy of the repository's pretrained/ folder: `attnviz app --models DIR` "
        "(or ATTNVIZ_PRETRAINED=DIR)."
    )


def recipe_path(name: str) -> Path:
    """The recipe a shipped model was built from."""
    return pretrained_dir() / "recipes" / f"{name}.json"
