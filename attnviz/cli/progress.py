"""Progress of the commands that read a corpus (``translate --file``, ``align-eval``, ``attention``): a
count on standard error where a person watches it and the results go elsewhere (a file, a pipe);
nothing where the results appear on the terminal as they come, or where standard error is a file."""

from __future__ import annotations

import sys

from tqdm import tqdm


def counter(unit: str, total: int | None = None) -> tqdm:
    """What is done so far and its rate (with ``total``: its share and the time left), on standard error
    when it is a terminal and standard output is not; a bar that draws nothing otherwise."""
    watched = sys.stderr is not None and sys.stderr.isatty() and not sys.stdout.isatty()
    return tqdm(total=total, unit=unit, file=sys.stderr, disable=not watched)


def note(message: str) -> None:
    """A line on standard error that the count, where there is one, is redrawn under."""
    tqdm.write(message, file=sys.stderr)
