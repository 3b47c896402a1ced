"""Siblings of a model: every shipped combination resolves or says why not, the front entry, a
slot's base model before its variants."""

from __future__ import annotations

from attnviz.server import siblings
from attnviz.store import catalog


def test_each_shipped_combination_resolves_and_impossible_ones_say_why():
    common = {"task": "t", "score": "dot", "source": "pretrained"}
    models = [
        {"name": "a", "style": "luong", "path": "a", **common},
        {"name": "b", "style": "bahdanau", "path": "b", **common},
    ]
    grid = siblings.slots(models, "t", config={"encoder": "transformer", "emb_dim": 32, "hidden_dim": 48})
    assert grid["dot", "luong"].entry["name"] == "a" and grid["dot", "bahdanau"].entry["name"] == "b"
    assert grid["scaled_dot", "luong"].reason.startswith("impossible")  # 32-d annotations, 48-d decoder
    assert "either style" in grid["general", "luong"].reason and "sibling" not in grid["general", "luong"].reason
    alone = siblings.slots(models[:1], "t")["dot", "bahdanau"].reason  # dot/luong exists: its sibling can be trained
    assert "train the missing sibling" in alone
    assert siblings.sibling(models, models[0], "bahdanau")["name"] == "b"


def test_a_slot_with_a_shipped_variant_opens_on_the_base_model():
    """de-en ships additive/Bahdanau twice (plain and guided): the plain one is the slot's default,
    and the guided twin stays a choice in the checkpoint box."""
    models = [m for m in catalog.list_models() if m["source"] == "pretrained"]
    pair = siblings.matches(models, "multi30k-de-en", "additive", "bahdanau")
    assert [m["name"] for m in pair] == ["multi30k-de-en-additive-bahdanau", "multi30k-de-en-additive-bahdanau-guided"]
    assert siblings.slots(models, "multi30k-de-en")["additive", "bahdanau"].entry["name"] == pair[0]["name"]
    luong = next(m for m in models if m["name"] == "multi30k-de-en-additive-luong")
    assert siblings.sibling(models, luong, "bahdanau")["name"] == "multi30k-de-en-additive-bahdanau"


def test_nothing_is_shipped_nothing_is_warmed():
    assert siblings.front_entry([]) is None
