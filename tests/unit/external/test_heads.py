"""Choices of heads by name, and their parsing from the command line and the page."""

from __future__ import annotations

import pytest

from attnviz.errors import InputError
from attnviz.external import Pick, every_pick, parse_heads


def test_pick_names():
    assert Pick().name == "all layers and heads"
    assert Pick(2).name == "layer 2" and Pick(2, 5).name == "layer 2, head 5"
    assert Pick(heads=((3, 1), (4, 0))).name == "heads 3:1 4:0"


def test_parse_heads_takes_spaces_or_commas():
    assert parse_heads("3:1 4:0") == parse_heads("3:1,4:0") == ((3, 1), (4, 0))
    for bad in ("", "3", "3:x", "a:1", "3-1"):
        with pytest.raises(InputError):
            parse_heads(bad)


def test_every_pick_is_the_average_then_layers_then_heads():
    picks = every_pick(2, 3)
    assert picks[:3] == [Pick(), Pick(0), Pick(1)] and picks[3:] == [Pick(a, b) for a in range(2) for b in range(3)]
