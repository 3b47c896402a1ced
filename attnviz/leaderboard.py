"""The leaderboard of shipped models: one table (score function x task) from the manifest,
written into README.md between markers so the two cannot drift apart."""

from __future__ import annotations

from pathlib import Path

from attnviz.catalog import PROJECT_DIR, read_manifest
from attnviz.errors import ConfigError

BEGIN, END = "<!-- leaderboard:begin -->", "<!-- leaderboard:end -->"
COLUMNS = (
    "model", "task", "score", "style", "BLEU", "BLEU cased", "exact match", "AER", "entropy", "params", "train s",
)  # fmt: skip


def _fmt(value, digits: int) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def rows(entries: list[dict] | None = None) -> list[list[str]]:
    """One row per shipped model, grouped by task, in manifest order within a task."""
    entries = read_manifest() if entries is None else entries
    table = []
    for e in sorted(entries, key=lambda e: (e.get("task") or "", e["name"])):
        m = e.get("metrics") or {}
        table.append(
            [
                f"`{e['name']}`",
                e.get("task") or "?",
                e["score"],
                e["style"],
                _fmt(m.get("bleu"), 2),
                _fmt(m.get("bleu_cased"), 2),
                _fmt(m.get("exact_match"), 3),
                _fmt(m.get("aer"), 3),
                _fmt(m.get("entropy"), 3),
                f"{e['parameters']:,}" if e.get("parameters") else "?",
                _fmt(e.get("train_seconds"), 0),
            ]
        )
    return table


def markdown(entries: list[dict] | None = None) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(r) + " |" for r in rows(entries)]
    return "\n".join(lines)


def write_readme(path: Path = PROJECT_DIR / "README.md", entries: list[dict] | None = None) -> bool:
    """Replace the table between the markers; return True if the file changed."""
    text = path.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise ConfigError(f"{path} has no {BEGIN} ... {END} markers to put the leaderboard between")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = f"{head}{BEGIN}\n{markdown(entries)}\n{END}{tail}"
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def readme_table(path: Path = PROJECT_DIR / "README.md") -> str:
    """The table currently in README.md (for the test that it matches the manifest)."""
    text = path.read_text(encoding="utf-8")
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip() if BEGIN in text else ""
