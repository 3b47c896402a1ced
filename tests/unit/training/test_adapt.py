"""Adaptation: a fine-tuned copy whose attention changes, the model and its file left untouched,
guided by eflomal's links of the same bitext, and clear errors for a bitext it cannot use."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.errors import ConfigError, DataError
from attnviz.store import load_checkpoint, save
from attnviz.training.adapt import AdaptConfig, adapt
from tests.support.tiny import reverse_corpus, tiny_translator

SOURCES = [s.split() for s in ("a b c", "b c d e", "c a", "d e a b", "e e c", "a d")]
TARGETS = [list(reversed(s)) for s in SOURCES]


@pytest.fixture
def translator():
    return tiny_translator(reverse_corpus(), score="general", style="luong")


def test_adapting_changes_the_attention_of_a_copy_only(translator, tmp_path):
    path = save(translator, tmp_path / "shipped.safetensors")
    before_bytes = path.read_bytes()
    model = load_checkpoint(path)
    model.meta["metrics"] = {"bleu": 1.0}
    state = {k: v.clone() for k, v in model.model.state_dict().items()}
    adapted = adapt(model, SOURCES, TARGETS, AdaptConfig(steps=20, lr=0.01, batch_size=4))
    assert all(torch.equal(state[k], v) for k, v in model.model.state_dict().items())  # the model is untouched
    assert path.read_bytes() == before_bytes  # and so is its file
    a, b = model.align("a b c", "c b a").weights, adapted.align("a b c", "c b a").weights
    assert np.abs(a - b).max() > 1e-3
    assert "metrics" not in adapted.meta and model.meta["metrics"] == {"bleu": 1.0}
    info = adapted.meta["adapted"]
    assert info["steps_run"] == 20 and info["pairs"] == len(SOURCES) and not info["guided"]


def test_adaptation_lowers_the_loss_on_the_bitext(translator):
    losses = []
    adapt(
        translator,
        SOURCES,
        TARGETS,
        AdaptConfig(steps=30, lr=0.01, batch_size=6),
        callback=lambda p: losses.append(p.loss) if p.kind == "step" else None,
    )
    assert np.mean(losses[-5:]) < np.mean(losses[:5])


def test_guided_adaptation_uses_eflomal_on_the_same_bitext(translator, tmp_path):
    pytest.importorskip("eflomal")
    adapted = adapt(
        translator, SOURCES * 4, TARGETS * 4, AdaptConfig(steps=5, batch_size=8, guided=True), links_cache=tmp_path
    )
    assert adapted.meta["adapted"]["guided"] and list(tmp_path.glob("eflomal-*.links"))


def test_a_stop_keeps_the_steps_done(translator):
    calls = []
    adapted = adapt(
        translator,
        SOURCES,
        TARGETS,
        AdaptConfig(steps=50, batch_size=2),
        should_stop=lambda: calls.append(1) or len(calls) > 3,
    )
    assert adapted.meta["adapted"]["stopped"] and adapted.meta["adapted"]["steps_run"] == 3


def test_more_steps_than_a_small_bitext_has_epochs_for(translator):
    calls = []
    adapted = adapt(
        translator,
        SOURCES[:2],
        TARGETS[:2],
        AdaptConfig(steps=2500, batch_size=32),  # one batch an epoch, and at most 1000 epochs
        should_stop=lambda: calls.append(1) or len(calls) > 3,
    )
    assert adapted.meta["adapted"]["pairs"] == 2 and adapted.meta["adapted"]["steps_run"] == 3


@pytest.mark.parametrize(
    ("sources", "targets", "message"),
    [
        ([], [], "empty"),
        ([["a"]], [["a"], ["b"]], "1 source but 2 target"),
        ([[]], [["a"]], "no pair of the bitext fits"),
        ([["a"] * 500], [["a"]], "no pair of the bitext fits"),
    ],
)
def test_a_bitext_it_cannot_use_gets_one_clear_message(translator, sources, targets, message):
    with pytest.raises(DataError, match=message):
        adapt(translator, sources, targets, AdaptConfig(steps=1))


@pytest.mark.parametrize("options", [{"steps": 0}, {"steps": True}, {"lr": 0.0}, {"batch_size": 0}])
def test_bad_settings_are_refused(options):
    with pytest.raises(ConfigError):
        AdaptConfig(**options)
