"""A training's settings: each one out of range is named with what it may be."""

from __future__ import annotations

import pytest

from attnviz.errors import ConfigError
from attnviz.training.config import TrainConfig


def test_settings_out_of_range_say_what_each_may_be():
    with pytest.raises(ConfigError) as e:
        TrainConfig(lr=5.0, clip=0.0, schedule="cosine")
    assert str(e.value) == (
        "training settings out of range: lr=5.0 (give above 0 and at most 1, e.g. 0.001); clip=0.0 (give above 0, "
        "e.g. 1.0); schedule='cosine' (give constant or linear)"
    )
    with pytest.raises(ConfigError, match=r"max_seconds=-1\.0 \(give above 0, or null for no budget\)"):
        TrainConfig(max_seconds=-1.0)
    assert TrainConfig(lr=1.0, clip=0.5, schedule="linear").lr == 1.0  # the edges that hold
