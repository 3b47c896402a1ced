"""Local attention misconfigured: a window around a score that is not content-based (location, or another
local score) or a dot content score between keys and queries of different sizes is a ConfigError saying
so when the model is built, and ``attnviz train`` reports it in one line with nothing saved."""

from __future__ import annotations

import json

import pytest

from attnviz.errors import ConfigError
from attnviz.model.config import ModelConfig
from attnviz.model.scores import get_score
from attnviz.model.seq2seq import build_model
from tests.support.cli import run


@pytest.mark.parametrize("score", ["local_m", "local_p"])
@pytest.mark.parametrize("content", ["location", "local_m", "local_p"])
def test_local_attention_needs_a_content_score(score, content):
    cfg = ModelConfig(src_vocab_size=10, tgt_vocab_size=10, score=score, style="luong", local_content=content)
    with pytest.raises(ConfigError, match=rf"^local attention needs a content score, not '{content}'$"):
        build_model(cfg, seed=0)


@pytest.mark.parametrize("content", ["dot", "general", "scaled_dot", "additive", "concat"])
def test_local_attention_builds_around_every_content_score(content):
    cfg = ModelConfig(src_vocab_size=10, tgt_vocab_size=10, score="local_p", style="luong", local_content=content)
    assert build_model(cfg, seed=0).cfg.local_content == content


def test_a_dot_content_score_needs_keys_of_the_querys_size():
    local_m = get_score("local_m")
    with pytest.raises(ConfigError, match=r"^the content score 'dot' needs keys of the query's size$"):
        local_m(8, 16, 8, 20, content="dot")
    assert local_m(8, 16, 8, 20, content="general").content is not None  # general maps one onto the other


def test_train_with_a_recipe_of_local_attention_around_location_is_one_line(capsys, models):
    recipe = {
        "name": "local-location",
        "data": "copy",
        "data_options": {"n_train": 16, "n_valid": 4, "n_test": 4},
        "model": {"score": "local_m", "style": "luong", "local_content": "location", "emb_dim": 8, "hidden_dim": 8},
    }
    (models.parent / "recipe.json").write_text(json.dumps(recipe), encoding="utf-8")
    code, out, err = run(capsys, "train", "--recipe", "recipe.json", "--max-steps", "1", "--eval-n", "0", "--quiet")
    assert code == 2 and not out and len(err.strip().splitlines()) == 1, err
    assert "local attention needs a content score, not 'location'" in err and "Traceback" not in err
    assert not list(models.iterdir())
