"""Where models live: shipped ones in ``pretrained/`` (with a manifest), trained ones in a
models folder. ``load`` takes a model name or a path."""

from __future__ import annotations

import json
import os
from pathlib import Path

from attnviz.checkpoint import SUFFIX, load_checkpoint, read_header
from attnviz.errors import CheckpointError
from attnviz.translator import Translator

PROJECT_DIR = Path(__file__).resolve().parents[1]
PRETRAINED_DIR = PROJECT_DIR / "pretrained"
MANIFEST = PRETRAINED_DIR / "manifest.json"


def models_dir() -> Path:
    """The folder for models trained by users: ``$ATTNVIZ_MODELS`` or ``./models``."""
    return Path(os.environ.get("ATTNVIZ_MODELS", PROJECT_DIR / "models")).resolve()


def model_roots(include_cwd: bool = False) -> list[Path]:
    """The folders checkpoints may be read from: ``pretrained/``, the models folder and, for
    the CLI (a user's own shell), the working directory. The app passes these as ``roots``."""
    roots = [PRETRAINED_DIR, models_dir()]
    return [*roots, Path.cwd().resolve()] if include_cwd else roots


def read_manifest() -> list[dict]:
    """The shipped models' manifest entries (empty when nothing is shipped)."""
    if not MANIFEST.is_file():
        return []
    try:
        data = json.loads(MANIFEST.read_text(encoding="utf-8"))
        return list(data["models"])
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise CheckpointError(f"{MANIFEST} is malformed ({e}); restore it from git") from e


def write_manifest(folder: Path = PRETRAINED_DIR, check=None) -> list[dict]:
    """Rebuild ``manifest.json`` from the checkpoints' own headers (the single source of truth).

    ``check(file) -> dict``, when given, adds each model's small-sample metrics under "check".
    """
    entries = []
    for path in sorted(folder.glob(f"*{SUFFIX}")):
        header = read_header(path)
        meta, cfg = header.get("meta", {}), header["config"]
        entries.append(
            {
                "name": path.stem,
                "file": path.name,
                "task": meta.get("task"),
                "score": cfg["score"],
                "style": cfg["style"],
                "encoder": cfg["encoder"],
                "example": meta.get("example"),
                "metrics": meta.get("metrics", {}),
                "parameters": meta.get("parameters"),
                "train_seconds": meta.get("train_seconds"),
                "hardware": meta.get("hardware"),
                "recipe": f"recipes/{path.stem}.json",
                "size_bytes": path.stat().st_size,
            }
        )
        if check is not None:
            entries[-1]["check"] = check(path.name)
    tmp = folder / "manifest.json.tmp"
    tmp.write_text(json.dumps({"models": entries}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, folder / "manifest.json")
    return entries


def _entry(name: str, path: Path, header: dict, source: str) -> dict:
    meta, cfg = header.get("meta", {}), header.get("config", {})
    return {
        "name": name,
        "path": str(path),
        "source": source,
        "task": meta.get("task"),
        "score": cfg.get("score"),
        "style": cfg.get("style"),
        "example": meta.get("example"),
        "metrics": meta.get("metrics", {}),
        "parameters": meta.get("parameters"),
        "train_seconds": meta.get("train_seconds"),
    }


def list_models() -> list[dict]:
    """Shipped models (from the manifest) then user-trained ones (newest first); unreadable
    files in the models folder are skipped, not fatal."""
    models = []
    for item in read_manifest():
        keys = ("name", "task", "score", "style", "example", "metrics", "parameters", "train_seconds")
        entry = {k: item.get(k) for k in keys}
        models.append({**entry, "path": str(PRETRAINED_DIR / item["file"]), "source": "pretrained"})
    folder = models_dir()
    if folder.is_dir():
        files = sorted(folder.glob(f"*{SUFFIX}"), key=lambda p: p.stat().st_mtime, reverse=True)
        for path in files:
            try:
                models.append(_entry(path.stem, path, read_header(path), "trained"))
            except CheckpointError:
                continue
    return models


def resolve(name_or_path: str, roots: list[Path] | None = None) -> Path:
    """A model name (shipped or trained) or a checkpoint path -> the file.

    With ``roots``, a path must lie inside one of those folders (symlinks resolved), so a
    user cannot make the app read arbitrary files.
    """
    for entry in list_models():
        if entry["name"] == name_or_path:
            return Path(entry["path"])
    path = Path(name_or_path).expanduser()
    if roots is not None:
        real = path.resolve()
        if not any(real.is_relative_to(Path(r).resolve()) for r in roots):
            raise CheckpointError(
                f"{name_or_path!r} is outside the model folders ({', '.join(str(r) for r in roots)}); "
                "copy the checkpoint into one of them"
            )
    if path.is_file():
        return path
    names = [m["name"] for m in list_models()]
    hint = f"known models: {', '.join(names[:12])}" + (" ..." if len(names) > 12 else "")
    raise CheckpointError(f"no model named {name_or_path!r} and no file at that path; {hint}")


def load(name_or_path: str, device: str | None = None, roots: list[Path] | None = None) -> Translator:
    """Load a shipped model by name (see ``python -m attnviz list``) or a checkpoint by path."""
    from attnviz.config import pick_device

    return load_checkpoint(resolve(name_or_path, roots), device=pick_device(device) if device else "cpu")
