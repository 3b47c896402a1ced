"""Reading a gold file holds every link as written until the index base is chosen: each is a small
object with slots (about 72 bytes), not an object with a dictionary of its own (about 150), on top of
the links the reader returns; the messages on a malformed line are the reader's as before."""

from __future__ import annotations

import tracemalloc

import pytest

from attnviz.errors import DataError
from attnviz.links import parse_gold

LINES, PER_LINE = 500, 40


def test_the_links_as_written_cost_little_on_top_of_the_result():
    lines = [" ".join(f"{k % 30 + 1}{'-' if k % 3 else 'p'}{k * 7 % 29 + 1}" for k in range(PER_LINE))] * LINES
    lengths = [(30, 30)] * LINES
    parse_gold(lines[:5], lengths[:5])  # compiled patterns and caches: not the reading's
    tracemalloc.start()
    try:
        gold = parse_gold(lines, lengths)
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert gold.format == "talp" and gold.base == 1 and len(gold.alignments) == LINES
    assert (peak - kept) / (LINES * PER_LINE) < 110  # bytes a link written, beyond what is returned


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["1-1", "2-x"], "gold file line 2: '2-x' is not a talp link"),
        (["1-1 2?2", "1p1"], "gold file line 2: '1p1' mixes notations"),
        (["1-1", "3-3"], "gold file line 2: link 3-3 is outside its sentence"),
    ],
)
def test_a_malformed_line_is_named(lines, message):
    fmt = "talp" if "x" in lines[1] else "auto"
    with pytest.raises(DataError, match=message.replace("?", r"\?")):
        parse_gold(lines, [(2, 2)] * len(lines), fmt, base=1 if "outside" in message else "auto")
