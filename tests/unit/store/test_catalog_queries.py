"""The catalog's questions: every shipped combination resolves or says why not, a model's sibling,
the front entry and its example, a slot's base model before its variants."""

from __future__ import annotations

import pytest

from attnviz.store import PRETRAINED, ModelEntry, catalog
from attnviz.store import catalog_queries as queries


def _entry(name: str, task: str, source: str, score: str = "dot", style: str = "luong", example=None) -> ModelEntry:
    return ModelEntry(name, name, source, task, score, style, example)


def test_each_shipped_combination_resolves_and_impossible_ones_say_why():
    models = [_entry("a", "t", "pretrained", style="luong"), _entry("b", "t", "pretrained", style="bahdanau")]
    grid = queries.slots(models, "t", config={"encoder": "transformer", "emb_dim": 32, "hidden_dim": 48})
    assert grid["dot", "luong"].entry.name == "a" and grid["dot", "bahdanau"].entry.name == "b"
    assert grid["scaled_dot", "luong"].reason.startswith("impossible")  # 32-d annotations, 48-d decoder
    assert "either style" in grid["general", "luong"].reason and "sibling" not in grid["general", "luong"].reason
    alone = queries.slots(models[:1], "t")["dot", "bahdanau"].reason  # dot/luong exists: its sibling can be trained
    assert "train the missing sibling" in alone
    assert queries.sibling(models, models[0], "bahdanau").name == "b"


def test_a_slot_with_a_shipped_variant_opens_on_the_base_model():
    """de-en ships additive/Bahdanau twice (plain and guided): the plain one is the slot's default,
    and the guided twin stays a choice in the checkpoint box."""
    models = [m for m in catalog.list_models() if m.source == "pretrained"]
    pair = queries.matches(models, "multi30k-de-en", "additive", "bahdanau")
    assert [m.name for m in pair] == ["multi30k-de-en-additive-bahdanau", "multi30k-de-en-additive-bahdanau-guided"]
    assert queries.slots(models, "multi30k-de-en")["additive", "bahdanau"].entry.name == pair[0].name
    luong = next(m for m in models if m.name == "multi30k-de-en-additive-luong")
    assert queries.sibling(models, luong, "bahdanau").name == "multi30k-de-en-additive-bahdanau"


def test_nothing_is_shipped_nothing_is_warmed():
    assert queries.front_entry([]) is None


def test_a_shipped_task_opens_on_its_front_example_a_task_of_ones_own_on_its_model_s():
    shipped = _entry("a", "multi30k-en-fr", "pretrained", example="in front of an igloo.")
    own = _entry("b", "multi30k-en-fr", "trained", example="my sentence")
    toy = _entry("c", "toy-fr", "pretrained", example="the cat eats .")
    assert queries.front_example([shipped, own], "multi30k-en-fr") == queries.FRONT_EXAMPLES["multi30k-en-fr"]
    assert queries.front_example([own], "multi30k-en-fr") == "my sentence"  # not shipped here: the model's own
    assert queries.front_example([toy], "toy-fr") == "the cat eats ."


# what each front example must come out as, from every shipped model of its task
# the right translations of each task's front example ("Ein schwarzer Hund läuft am Strand."
# may be told in either tense of English; "is running" is rennt or läuft in German)
FRONT_TRANSLATIONS = {
    "multi30k-en-fr": {"Un chien noir court sur la plage."},
    "multi30k-en-de": {"Ein schwarzer Hund rennt am Strand.", "Ein schwarzer Hund läuft am Strand."},
    "multi30k-de-en": {"A black dog running on the beach.", "A black dog runs on the beach."},
}


@pytest.mark.parametrize("task", sorted(FRONT_TRANSLATIONS))
def test_every_shipped_model_translates_its_task_s_front_example_right(task):
    shipped = [m for m in catalog.list_models() if m.source == "pretrained" and queries.task_of(m) == task]
    if not shipped:
        pytest.skip(f"no shipped {task} models here")
    sentence = queries.front_example(shipped, task)
    for entry in shipped:
        translator = catalog.load(entry.path)
        assert translator.text_of(translator.translate(sentence)) in FRONT_TRANSLATIONS[task], entry.name


def _additive(style: str, variant: str = "", score: str = "additive") -> ModelEntry:
    """A shipped de-en model of ``score`` and ``style``, plain or its twin (``variant="-guided"``)."""
    task = "multi30k-de-en"
    return _entry(f"{task}-{score}-{style}{variant}", task, PRETRAINED, score, style)


def test_a_guided_twin_flips_to_the_other_style_s_twin_where_there_is_one():
    plain_b, twin_b = _additive("bahdanau"), _additive("bahdanau", "-guided")
    plain_l, twin_l = _additive("luong"), _additive("luong", "-guided")
    models = [plain_b, twin_b, plain_l, twin_l]
    assert queries.sibling(models, twin_b, "luong") == twin_l
    assert queries.sibling(models, plain_b, "luong") == plain_l
    assert queries.sibling(models, twin_l, "bahdanau") == twin_b
    assert queries.sibling([plain_b, twin_b, plain_l], twin_b, "luong") == plain_l  # no twin: the plain one


def test_a_plain_model_names_its_guided_twin_and_a_twin_has_none():
    plain, twin, dot = _additive("bahdanau"), _additive("bahdanau", "-guided"), _additive("bahdanau", score="dot")
    models = [plain, twin, _additive("luong", "-guided"), dot]
    assert queries.guided_twin(models, plain) is twin
    assert queries.guided_twin(models, twin) is None  # a twin has no twin
    assert queries.guided_twin(models, dot) is None  # no guided dot/Bahdanau here
