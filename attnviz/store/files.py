"""Where attnviz may write: safe model names, download file names, free paths, refused destinations,
name reservations between concurrent trainings, and stale temporary files.

A reservation is a lock file ``<folder>/.training/<stem>.lock`` held with ``flock`` for as
long as a training runs: the kernel drops the lock when the process dies (even by SIGKILL),
so a name is never held forever by a dead server, and a lock file nobody holds is free.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import time
import unicodedata
from pathlib import Path

from attnviz.errors import ConfigError, resolved
from attnviz.store.paths import SUFFIX, models_dir, pretrained_dir, read_manifest

try:
    import fcntl
except ImportError:  # Windows: no flock; fall back to file ages
    fcntl = None

STAGING = ".training"  # inside the models folder; list_models only globs the folder itself
TEMP_GLOB = f".*{SUFFIX}.*.tmp"  # checkpoint.save's temporary files
# safetensors' own temporary file, beside the one it writes (Rust's tempfile: ".tmp" and 6 characters)
WRITER_TEMP = re.compile(r"\.tmp[A-Za-z0-9]{6}")
STALE_SECONDS = 600.0  # a temporary file no live save holds and older than this is debris
# checkpoint.save locks its temporary file from the moment it makes it: where locks work, one unlocked
# and this old is a killed save's (a model's size of disk it would otherwise hold for ten minutes)
DEAD_SAVE_SECONDS = 5.0


MAX_NAME = 60  # characters of a model's file stem


def slugify(name: str, max_len: int = MAX_NAME) -> str:
    """A safe file stem from a user's model name: ASCII letters, digits, ``-`` and ``_`` only."""
    text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-_.")[:max_len].strip("-_")
    if not slug:
        raise ConfigError(
            f"the model name {name!r} has no ASCII letters or digits; a model's file name keeps only A-Z, a-z, "
            "0-9, '-' and '_': give it a name such as 'dates-dot' (its task and languages show beside it)"
        )
    return slug


def name_part(word: str) -> str:
    """A score or a decoder style as a model's name spells it: ``local_m`` -> ``local-m``."""
    return word.replace("_", "-").lower()


def default_model_name(task: str, score: str, style: str) -> str:
    """The name the app gives a model of ``task``, ``score`` and ``style`` (the Train form's suggestion, a
    missing sibling) unless the user gives one, spelled as the shipped models are
    (``dates-local-m-luong``); cut so that a free-name suffix still fits."""
    return slugify("-".join([task, name_part(score), name_part(style)])[: MAX_NAME - 4])


def slug(text: str, max_len: int = 40) -> str:
    """A piece of a file name from any text: ASCII letters, digits and ``-`` (accents dropped,
    everything else a dash), cut at a word boundary; ``""`` when nothing is left."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    out = re.sub(r"[^A-Za-z0-9]+", "-", ascii_text).strip("-")
    if len(out) > max_len:
        out = out[:max_len].rsplit("-", 1)[0] if "-" in out[:max_len] else out[:max_len]
    return out.strip("-")


def models_slug(names: list[str], max_len: int = 150, joiner: str = "vs") -> str:
    """Several models' names as one piece of a file name that keeps every name whole: the dash
    parts they all begin with once, then each name's rest, joined by ``-vs-`` (``joiner``: ``minus``
    for a difference, first minus second) (``multi30k-de-en-additive-bahdanau-vs-luong``). Where that
    is longer than ``max_len``, the shared beginning and how many models (``multi30k-de-en-5-models``)."""
    names = [slug(n, 10_000) for n in dict.fromkeys(names)]
    names = [n for n in names if n]
    if len(names) <= 1:
        return names[0] if names else ""
    parts = [n.split("-") for n in names]
    shared = 0  # leading dash parts every name has, leaving each name at least one of its own
    while shared < min(map(len, parts)) - 1 and len({p[shared] for p in parts}) == 1:
        shared += 1
    head = parts[0][:shared]
    whole = "-".join([*head, f"-{joiner}-".join("-".join(p[shared:]) for p in parts)])
    return whole if len(whole) <= max_len else "-".join([*head, f"{len(names)}-models"])


def file_stem(model: str, sentence: str, what: str = "") -> str:
    """A download's file name without extension: the model's name (or :func:`models_slug` of
    several, never cut), a slug of the sentence, what the file holds
    (``toy-fr-general-luong-the-cat-eats-weights``)."""
    parts = [slug(model, 200), slug(sentence), _told_apart(sentence), slug(what, 40)]
    return "-".join(p for p in parts if p) or "attnviz"


def _told_apart(text: str) -> str:
    """For a text whose :func:`slug` leaves part of it out (letters or digits with no ASCII spelling:
    Arabic, Chinese, Hindi, ``ß``...; or words past the slug's length): the first 8 hex digits of its
    SHA-256, so each sentence's files have their own names; else ``""``."""
    unspelled = any(c.isalnum() and not unicodedata.normalize("NFKD", c).encode("ascii", "ignore") for c in text)
    if not unspelled and slug(text) == slug(text, 10_000):
        return ""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def shipped_names() -> set[str]:
    return {m.get("name") for m in read_manifest()}


def name_lock(folder: Path, stem: str) -> Path:
    """The lock a training holds on the model name ``stem`` of ``folder`` while it runs (the app's
    jobs and ``attnviz train`` alike): ``folder/.training/stem.lock``."""
    return Path(folder) / STAGING / f"{stem}.lock"


def name_taken(folder: Path, stem: str) -> bool:
    """A model file, a live training or a stranded run (see :mod:`attnviz.server.stranded`) holds it."""
    staging = Path(folder) / STAGING
    return (
        (Path(folder) / f"{stem}{SUFFIX}").exists()
        or (staging / f"{stem}{SUFFIX}").exists()
        or is_locked(name_lock(folder, stem))
    )


def free_path(folder: Path, stem: str) -> Path:
    """``folder/stem.safetensors``, or ``stem-2``, ``stem-3`` ... when taken or a shipped name."""
    shipped = shipped_names()
    for k in range(1, 1000):
        candidate = stem if k == 1 else f"{stem}-{k}"
        if candidate not in shipped and not name_taken(folder, candidate):
            return Path(folder) / f"{candidate}{SUFFIX}"
    raise ConfigError(f"too many models named {stem!r}; pick another name")


def is_locked(path: Path) -> bool:
    """Whether a live process holds ``path`` with :func:`hold_lock` (False when there is no such file)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        if fcntl is None:
            return time.time() - os.fstat(fd).st_mtime < STALE_SECONDS
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def hold_lock(path: Path) -> int | None:
    """Lock ``path`` (created if missing) for this process; return the descriptor to
    :func:`release_lock`, or None when another live process holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return None
        with contextlib.suppress(FileNotFoundError):
            if os.stat(path).st_ino == os.fstat(fd).st_ino:  # not unlinked by its last holder meanwhile
                return fd
        os.close(fd)


def release_lock(path: Path, fd: int | None, remove: bool = True) -> None:
    """Undo :func:`hold_lock`; the file is removed first, while still locked, so no one locks a dead name."""
    if fd is None:
        return
    if remove:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    os.close(fd)


def reserve_name(folder: Path, stem: str) -> tuple[Path, int]:
    """Reserve the first free name ``stem``, ``stem-2``, ... in ``folder`` for a training:
    return the final checkpoint path and the lock to :func:`release_lock` when the model is moved in."""
    shipped = shipped_names()
    staging = Path(folder) / STAGING
    for k in range(1, 1000):
        candidate = stem if k == 1 else f"{stem}-{k}"
        if candidate in shipped or (Path(folder) / f"{candidate}{SUFFIX}").exists():
            continue
        if (staging / f"{candidate}{SUFFIX}").exists():
            continue  # a stranded run keeps its name until it is kept or discarded
        lock = name_lock(folder, candidate)
        fd = hold_lock(lock)
        if fd is None:
            continue
        if (Path(folder) / f"{candidate}{SUFFIX}").exists() or (staging / f"{candidate}{SUFFIX}").exists():
            release_lock(lock, fd, remove=False)  # appeared between the check and the lock
            continue
        return Path(folder) / f"{candidate}{SUFFIX}", fd
    raise ConfigError(f"too many models named {stem!r}; pick another name")


def move_no_clobber(source: Path, folder: Path, stem: str) -> Path:
    """Move ``source`` to ``folder/stem.safetensors``, or the next free name if that file
    appeared meanwhile; never overwrites. Returns the final path."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{stem}{SUFFIX}"
    for _ in range(1000):
        try:
            os.link(source, target)  # fails if target exists: no overwrite, no race
        except FileExistsError:
            target = free_path(folder, stem)
            continue
        except OSError:  # a file system without hard links
            if target.exists():
                target = free_path(folder, stem)
                continue
            os.replace(source, target)
            return target
        os.unlink(source)
        return target
    raise ConfigError(f"could not find a free name for {stem!r} in {folder}")


def inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` (symlinks resolved) lies in ``folder``."""
    return resolved(path).is_relative_to(resolved(folder))


def another_place(folder: Path) -> str:
    """How to save elsewhere when ``folder`` cannot hold a checkpoint: ``--out``, and for the models folder
    (where a model goes without ``--out``) also the setting that names it."""
    if resolved(folder) == resolved(models_dir()):
        return "choose another --out, or point ATTNVIZ_MODELS at a writable folder"
    return "choose another --out"


def check_output(
    path: str | Path, force: bool = False, resuming: bool = False, naming: str = "--name or --out"
) -> Path:
    """Refuse a checkpoint destination before any work: a wrong suffix, a folder that cannot
    hold it, a place inside ``pretrained/`` (rebuilt only by ``pretrained/build.py``), a shipped
    model's name in the models folder (it would hide that model), an existing file without
    ``force`` (``resuming`` allows the file being resumed). ``naming``: the options of the command
    asking that choose the file."""
    path = Path(path).expanduser()
    if path.suffix != SUFFIX:
        stem = "model" if path.name.lower() == SUFFIX else path.stem  # '.safetensors' alone has no name
        raise ConfigError(f"checkpoints are saved as {SUFFIX} files; got {path.name!r}: name it {stem}{SUFFIX}")
    if inside(path, pretrained_dir()):
        raise ConfigError(
            f"{path} is inside {pretrained_dir()}, the shipped models; the CLI never writes there "
            "(rebuild shipped models with pretrained/build.py). Write to models/ or another folder."
        )
    for parent in resolved(path, "--out").parents:
        if parent.exists():
            if not parent.is_dir():
                raise ConfigError(f"cannot save {path}: {parent} is a file, not a folder; {another_place(parent)}")
            if not os.access(parent, os.W_OK):
                raise ConfigError(f"cannot save {path}: {parent} is not writable; {another_place(parent)}")
            break
    if path.is_dir():
        raise ConfigError(f"{path} is a folder; give a file name ending in {SUFFIX}")
    if not resuming and resolved(path.parent) == resolved(models_dir()) and path.stem in shipped_names():
        raise ConfigError(
            f"{path.stem!r} is the name of a shipped model, which a model of that name in {path.parent} would "
            f"hide; choose another {naming}"
        )
    if (path.exists() or path.is_symlink()) and not (force or resuming):
        raise ConfigError(f"{path} already exists; add --force to overwrite it, or choose another {naming}")
    return path


def is_stale(path: Path, max_age: float = STALE_SECONDS) -> bool:
    """Old enough and not held by a live save (see ``checkpoint.save``)."""
    try:
        age = time.time() - path.stat().st_mtime
    except FileNotFoundError:
        return False
    return age > max_age and not is_locked(path)


def clean_stale_temp(folder: str | Path, max_age: float = STALE_SECONDS) -> list[Path]:
    """Delete the temporary files that a killed save left in ``folder`` (and its staging
    folder); a file that a live save holds or that is younger than ``max_age`` seconds is kept
    (:data:`DEAD_SAVE_SECONDS` for ``checkpoint.save``'s own where file locks work).
    Both kinds are deleted: ``checkpoint.save``'s own (locked while it writes) and the one
    safetensors writes through (``.tmpXXXXXX``, unlocked, so only its age tells a dead one).
    Returns what was deleted."""
    removed = []
    for sub in (Path(folder), Path(folder) / STAGING):
        if not sub.is_dir():
            continue
        writer_temps = [p for p in sub.glob(".tmp*") if WRITER_TEMP.fullmatch(p.name)]
        locked_age = min(max_age, DEAD_SAVE_SECONDS) if fcntl is not None else max_age
        ages = [(p, locked_age) for p in sub.glob(TEMP_GLOB)] + [(p, max_age) for p in writer_temps]
        for path, age in ages:
            if path.is_file() and is_stale(path, age):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                    removed.append(path)
    return removed


SHARED_MODE = 0o644  # what a saved file gets: mkstemp's 0600 would hide it from a web server or another user


def write_atomic(path: Path, text: str | bytes, replace: bool = True) -> None:
    """``text`` (or bytes) to ``path`` through a temporary file in the same folder, renamed over it: never half a
    file, and the old one whole if the disk fills. Line endings are written as they are in ``text``.
    A symlink is followed (the file it names is replaced, the link kept) and an existing file keeps its
    mode. ``replace=False`` never overwrites: a file that appeared at ``path`` meanwhile (another run)
    is a FileExistsError, checked and created in one step (a hard link)."""
    path = Path(path)
    if path.is_symlink():
        path = path.resolve()
    try:
        mode = path.stat().st_mode & 0o7777
    except OSError:
        mode = SHARED_MODE
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") if isinstance(text, bytes) else os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(tmp, mode)
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # FileExistsError when something is there now
            os.unlink(tmp)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
