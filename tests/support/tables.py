"""Small tables of sentence pairs: ``ROWS`` as an uploaded CSV file, ``PAIRS`` as (German, English)."""

from __future__ import annotations

ROWS = "en,fr\n" + "".join(f"the cat {i} eats the apple,le chat {i} mange la pomme\n" for i in range(60))
PAIRS = [(f"ein satz {i}", f"a sentence {i}") for i in range(30)]
