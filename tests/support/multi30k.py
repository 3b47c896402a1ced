"""A tiny folder in the Multi30k layout (``train.en.gz``, ``val.de.gz``, ``test_2016_flickr.fr.gz``)."""

from __future__ import annotations

import gzip
from pathlib import Path

LINES = {
    "en": ["A dog runs.", "Two men talk.", "A girl sings.", "A cat sleeps.", "A boy jumps.", "Rain falls."],
    "de": [
        "Ein Hund rennt.",
        "Zwei Männer reden.",
        "Ein Mädchen singt.",
        "Eine Katze schläft.",
        "Ein Junge springt.",
        "Regen fällt.",
    ],
    "fr": [
        "Un chien court.",
        "Deux hommes parlent.",
        "Une fille chante.",
        "Un chat dort.",
        "Un garçon saute.",
        "La pluie tombe.",
    ],
}


def write(path: Path, lines: list[str], gz: bool = True) -> None:
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data) if gz else data)


def multi30k_folder(folder: Path) -> Path:
    """``folder`` (made if missing) filled with 4 train, 1 val and 1 test pair per language."""
    folder.mkdir(parents=True, exist_ok=True)
    for lang, lines in LINES.items():
        write(folder / f"train.{lang}.gz", lines[:4])
        write(folder / f"val.{lang}.gz", lines[4:5])
        write(folder / f"test_2016_flickr.{lang}.gz", lines[5:])
    return folder
