"""The leaderboard of shipped models: one table (score function x task) from the manifest,
written into a Markdown file (docs/models.md) between markers so the two cannot drift apart."""

from __future__ import annotations

from pathlib import Path

from attnviz.errors import ConfigError
from attnviz.store import ModelEntry, checkout_dir, pretrained_dir, read_manifest, write_atomic

BEGIN, END = "<!-- leaderboard:begin -->", "<!-- leaderboard:end -->"
# (column title, record key, decimals or None for text)
FIELDS = (
    ("model", "model", None),
    ("task", "task", None),
    ("score", "score", None),
    ("style", "style", None),
    ("beam", "beam", 0),
    ("BLEU", "bleu", 2),
    ("BLEU cased", "bleu_cased", 2),
    ("valid BLEU", "valid_bleu", 2),
    ("exact match", "exact_match", 3),
    ("AER", "aer", 3),
    ("entropy", "entropy", 3),
    ("params", "params", None),
    ("epochs", "epochs", None),
    ("precision", "precision", None),
    ("device", "device", None),
    ("train time (s)", "train_seconds", 0),
)
LEADERBOARD_FIELDS = FIELDS  # (title, key, decimals) of each column, for any view of the leaderboard
COLUMNS = tuple(title for title, _, _ in FIELDS)
LEADERBOARD_KEYS = tuple(key for _, key, _ in FIELDS)
LEADERBOARD_DECIMALS = tuple(decimals for _, _, decimals in FIELDS)  # None: text, or a count shown whole


def _shipped_entries() -> list[ModelEntry]:
    """Every model of the shipped manifest, its file here or not (an installed package's Multi30k models)."""
    folder = pretrained_dir()
    return [ModelEntry.from_manifest(item, folder) for item in read_manifest()]


def leaderboard_records(entries: list[ModelEntry] | None = None) -> list[dict]:
    """One record of raw values per model, by task then name: the manifest's shipped models by
    default, or any :func:`attnviz.store.list_models` entries (the app's table)."""
    entries = _shipped_entries() if entries is None else entries
    out = []
    for e in sorted(entries, key=lambda e: (e.task or "", e.name)):
        m = e.metrics or {}
        out.append(
            {
                "model": e.name,
                "task": e.task or "?",
                "score": e.score,
                "style": e.style,
                "beam": m.get("beam_size"),
                "bleu": m.get("bleu"),
                "bleu_cased": m.get("bleu_cased"),
                "valid_bleu": (m.get("valid") or {}).get("bleu"),
                "exact_match": m.get("exact_match"),
                "aer": m.get("aer"),
                "entropy": m.get("entropy"),
                "params": e.parameters,
                "epochs": e.epochs,
                "precision": e.precision,
                "device": e.device,
                "train_seconds": e.train_seconds,
            }
        )
    return out


def _cell(value: str | float | None, key: str, digits: int | None) -> str:
    if value is None:
        return "–"
    if key == "model":
        return f"`{value}`"
    if key == "params":
        return f"{value:,}"
    return str(value) if digits is None else f"{value:.{digits}f}"


def rows(entries: list[ModelEntry] | None = None) -> list[list[str]]:
    """The records as formatted table cells."""
    return [[_cell(r[key], key, digits) for _, key, digits in FIELDS] for r in leaderboard_records(entries)]


def leaderboard_markdown(entries: list[ModelEntry] | None = None) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(r) + " |" for r in rows(entries)]
    return "\n".join(lines)


MAX_MARKDOWN_BYTES = 20_000_000


def write_table(path: Path, entries: list[ModelEntry] | None = None) -> bool:
    """Replace the table between the markers of the Markdown file ``path``; return True if it changed.
    The rest of the file is kept byte for byte (its line endings too), and the file is replaced whole
    (:func:`~attnviz.store.write_atomic`): a full disk leaves it as it was."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path} is not a Markdown file (a missing path, a folder or a device); give a .md file")
    if path.stat().st_size > MAX_MARKDOWN_BYTES:
        raise ConfigError(f"{path} is over {MAX_MARKDOWN_BYTES // 1_000_000} MB; give the Markdown file to update")
    try:
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path} is not UTF-8 text ({e.reason} at byte {e.start}); convert it to UTF-8") from None
    if BEGIN not in text or END not in text:
        raise ConfigError(f"{path} has no {BEGIN} ... {END} markers to put the leaderboard between")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    eol = "\r\n" if "\r\n" in text else "\n"
    table = leaderboard_markdown(entries).replace("\n", eol)
    new = f"{head}{BEGIN}{eol}{table}{eol}{END}{tail}"
    if new != text:
        write_atomic(path, new)
    return new != text


def attribution_results_path() -> Path | None:
    """Where ``benchmarks/attribution_aer.py`` writes its results in a checkout; outside one, the copy
    the package ships (the built-in tasks' models, which the wheel ships too), or None without it."""
    root = checkout_dir()
    if root:
        return root / "benchmarks" / "results" / "attribution_aer.json"
    packaged = Path(__file__).resolve().parent / "attribution_aer.json"
    return packaged if packaged.is_file() else None


def attribution_records(path: Path | None = None) -> list[dict]:
    """One row per model of ``benchmarks/attribution_aer.py``'s results (by default
    ``benchmarks/results/attribution_aer.json`` of the checkout, or outside one the copy the package
    ships): AER of attention and of
    each attribution method against gold links, and each method's mean per-step agreement with
    attention (Spearman, top-1). Empty when the benchmark has not been run."""
    import json

    path = path or attribution_results_path()
    if path is None or not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        models = data["models"]
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise ConfigError(f"{path} is malformed ({e}); run benchmarks/attribution_aer.py again") from e
    rows = []
    for name, m in sorted(models.items()):
        row = {"model": name, "task": m.get("task"), "pairs": m.get("pairs")}
        row |= {f"AER {k}": v for k, v in (m.get("aer") or {}).items()}
        row |= {f"Spearman {k}": v for k, v in (m.get("spearman") or {}).items()}
        row |= {f"top-1 {k}": v for k, v in (m.get("top1") or {}).items()}
        rows.append(row)
    return rows
