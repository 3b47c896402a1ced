"""A training's settings: each one out of range is named with what it may be; a model or data that cannot
train is refused before training, saying what to change."""

from __future__ import annotations

from dataclasses import replace

import pytest

from attnviz.errors import ConfigError, DataError
from attnviz.training.config import TrainConfig
from attnviz.training.fit import build_translator


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


def test_a_location_model_too_short_for_its_data_is_refused_before_training(corpus):
    """Location attention scores max_src_len positions: a shorter setting than the data's longest source
    failed mid-training with "shorten the sentence"; it is refused first, naming the length to give."""
    longest = max(len(p.source_tokens) for p in corpus.train) + 1
    with pytest.raises(ConfigError, match=rf"raise max_src_len to {longest} or more, or leave it out"):
        build_translator(corpus, score="location", max_src_len=2)
    assert build_translator(corpus, score="location", max_src_len=longest).config.max_src_len == longest


def test_an_empty_training_split_names_the_settings_that_may_have_emptied_it(corpus):
    with pytest.raises(DataError, match=r"the training split is empty; .* \(n_train, min_len, max_len in a recipe's"):
        build_translator(replace(corpus, train=[]))
