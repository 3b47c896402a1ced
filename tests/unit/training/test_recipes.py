"""Recipes: an interrupted one resumes from its last epoch (one an older version saved too), another
recipe's checkpoint is not resumed nor its unfinished epochs trained over, the hardware is named, guided
recipes, a recipe of the wrong shape is refused naming the field."""

import json
import re

import pytest
import torch

from attnviz.data import load_corpus
from attnviz.errors import ConfigError
from attnviz.evaluation import evaluate
from attnviz.store import recipe_path
from attnviz.store.checkpoint import load_checkpoint, read_header, save
from attnviz.training.config import TrainConfig
from attnviz.training.guided_links import GuidedConfig
from attnviz.training.recipes import MAX_RECIPE_BYTES, Recipe, remeasure, run_recipe, unfinished

RECIPE = {
    "name": "tiny-copy",
    "data": "copy",
    "data_options": {"n_train": 64, "n_valid": 16, "n_test": 8, "seed": 0},
    "model": {"emb_dim": 8, "hidden_dim": 16, "attn_dim": 8, "score": "general", "style": "luong"},
    "train": {"epochs": 4, "batch_size": 16, "lr": 0.01, "seed": 0, "patience": None},
}


def test_an_interrupted_recipe_resumes_from_its_last_epoch(tmp_path):
    recipe = Recipe(**RECIPE)
    out = tmp_path / "tiny.safetensors"
    calls = {"epochs": 0}

    def stop_after_two() -> bool:
        return calls["epochs"] >= 2

    def count(p) -> None:
        calls["epochs"] += p.kind == "epoch"

    run_recipe(recipe, out, callback=count, should_stop=stop_after_two, evaluate_split=None)
    progress = read_header(out)["meta"]["progress"]
    assert progress["epoch"] == 2 and len(progress["history"]) == 2

    seen = []
    model = run_recipe(recipe, out, callback=lambda p: seen.append(p.epoch) if p.kind == "epoch" else None, resume=True)
    assert sorted(set(seen)) == [3, 4]  # only the epochs that were missing
    assert [row["epoch"] for row in model.meta["history"]] == [1, 2, 3, 4]
    header = read_header(out)["meta"]
    assert "progress" not in header and header["metrics"]["n"] == 8
    assert header["train_seconds"] >= progress["seconds"]


def test_resume_ignores_a_checkpoint_of_another_recipe(tmp_path):
    out = tmp_path / "tiny.safetensors"
    run_recipe(Recipe(**RECIPE), out, should_stop=lambda: False, evaluate_split=None, callback=None)
    other = Recipe(**{**RECIPE, "train": {**RECIPE["train"], "epochs": 2}})
    torch.manual_seed(0)
    seen = []
    run_recipe(other, out, callback=lambda p: seen.append(p.epoch) if p.kind == "epoch" else None, resume=True)
    assert seen == [1, 2]  # started afresh: the file was finished, and by another recipe


def _stopped_after_two_epochs(recipe: Recipe, out) -> None:
    epochs = []
    run_recipe(
        recipe,
        out,
        callback=lambda p: p.kind == "epoch" and epochs.append(p.epoch),
        should_stop=lambda: len(epochs) >= 2,
        evaluate_split=None,
    )


def test_an_unfinished_training_an_older_version_saved_resumes(tmp_path):
    """Before ``store``, a recipe said ``"half": false``: its staging file's recipe still reads as this one."""
    recipe, out = Recipe(**RECIPE), tmp_path / "tiny.safetensors"
    _stopped_after_two_epochs(recipe, out)
    translator = load_checkpoint(out)
    old = {k: v for k, v in recipe.to_dict().items() if k != "store"} | {"half": False}
    translator.meta["recipe_full"] = old
    save(translator, out)
    assert read_header(out)["meta"]["recipe_full"] == old and unfinished(recipe, out)["epoch"] == 2
    seen = []
    run_recipe(recipe, out, callback=lambda p: seen.append(p.epoch) if p.kind == "epoch" else None, resume=True)
    assert sorted(set(seen)) == [3, 4]


def test_resume_leaves_the_unfinished_training_of_another_recipe_alone(tmp_path):
    out = tmp_path / "tiny.safetensors"
    _stopped_after_two_epochs(Recipe(**RECIPE), out)
    before = out.read_bytes()
    other = Recipe(**{**RECIPE, "train": {**RECIPE["train"], "epochs": 6}})
    with pytest.raises(ConfigError, match="holds an unfinished training of another recipe than 'tiny-copy'"):
        run_recipe(other, out, resume=True)
    assert out.read_bytes() == before  # its two epochs are still there


def test_progress_reports_and_the_checkpoint_name_the_hardware(tmp_path):
    seen = set()
    run_recipe(
        Recipe(**RECIPE), tmp_path / "tiny.safetensors", callback=lambda p: seen.add(p.hardware), evaluate_split=None
    )
    meta = read_header(tmp_path / "tiny.safetensors")["meta"]
    assert seen == {meta["hardware"]} and "CPU, " in meta["hardware"]
    assert meta["device"] == "cpu" and meta["precision"] == "fp32"


GUIDED_RECIPE = {
    **RECIPE,
    "name": "tiny-guided",
    "train": {**RECIPE["train"], "epochs": 2},
    "guided": {"weight": 0.5, "links": "gold"},  # the copy task's diagonal gold links
}


def test_a_guided_recipe_records_its_weight_and_links_and_resumes(tmp_path):
    out = tmp_path / "tiny.safetensors"
    recipe = Recipe(**GUIDED_RECIPE)
    epochs = []
    run_recipe(
        recipe,
        out,
        callback=lambda p: epochs.append(p) if p.kind == "epoch" else None,
        should_stop=lambda: len(epochs) >= 1,
        evaluate_split=None,
    )
    assert read_header(out)["meta"]["progress"]["epoch"] == 1
    model = run_recipe(recipe, out, resume=True, evaluate_split=None)
    meta = read_header(out)["meta"]
    assert [row["epoch"] for row in meta["history"]] == [1, 2] and model.meta["history"] == meta["history"]
    assert all(row["align_loss"] > 0 for row in meta["history"])
    assert meta["guided"] == {
        "weight": 0.5,
        "links": "gold",
        "method": "grow-diag-final-and",
        "links_file": "gold links of the training pairs",
    }
    assert meta["recipe"]["guided_weight"] == 0.5 and meta["recipe_full"]["guided"] == GUIDED_RECIPE["guided"]


def test_recipes_without_guidance_read_as_before_and_bad_guided_fields_are_refused():
    plain = Recipe(**{k: v for k, v in GUIDED_RECIPE.items() if k != "guided"})
    assert "guided" not in plain.to_dict() and plain.guided_config() is None
    with pytest.raises(ConfigError, match=r"unknown guided settings \['decay'\]"):
        Recipe(**{**GUIDED_RECIPE, "guided": {"weight": 0.3, "decay": 0.5}})
    with pytest.raises(ConfigError, match="set the guided weight in the guided field"):
        Recipe(**{**GUIDED_RECIPE, "train": {"guided_weight": 0.3}})


GUIDED_TWINS = sorted(p.stem for p in recipe_path("multi30k-de-en-additive-bahdanau").parent.glob("*-guided.json"))


@pytest.mark.parametrize("name", GUIDED_TWINS)
def test_every_shipped_guided_recipe_is_its_unguided_twin_plus_guidance(name):
    guided = Recipe.from_file(recipe_path(name))
    plain = Recipe.from_file(recipe_path(name.removesuffix("-guided")))
    assert guided.guided_config() == GuidedConfig(weight=0.1, links="eflomal")

    def what(recipe: Recipe) -> dict:  # the recipe less its name, guidance, device and storage
        train = {k: v for k, v in recipe.train.items() if k != "device"}
        return {**recipe.to_dict(), "name": None, "guided": None, "train": train, "store": None}

    assert what(guided) == what(plain)
    assert len(GUIDED_TWINS) >= 4  # de-en additive in both styles, en-de and en-fr additive/Bahdanau


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"task": "copy"}, r"unknown recipe fields \['task'\]; a recipe has name, data, "),
        ({"data": 5}, r"recipe field data must be a string, got 5 \(int\)"),
        ({"model": "big"}, r"recipe field model must be an object \{...\}, got 'big' \(str\)"),
        ({"eval_valid": 1}, r"recipe field eval_valid must be true or false, got 1 \(int\)"),
        ({"train": {**RECIPE["train"], "lr": "fast"}}, r"lr must be a number, got 'fast' \(str\)"),
        ({"train": {**RECIPE["train"], "epochs": True}}, r"epochs must be a whole number, got True \(bool\)"),
        ({"data_options": {"n_train": "64"}}, r"data_options\.n_train must be a whole number or null, got '64'"),
    ],
)
def test_a_recipe_of_the_wrong_shape_is_a_config_error_naming_the_field(tmp_path, change, message):
    path = tmp_path / "recipe.json"
    path.write_text(json.dumps({**RECIPE, **change}), encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        TrainConfig(**Recipe.from_file(path).train)  # the training settings are checked as the training reads them


def test_a_recipe_without_its_data_is_refused_by_name(tmp_path):
    path = tmp_path / "recipe.json"
    path.write_text(json.dumps({"name": "x"}), encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape('a recipe needs data, e.g. "name": "my-model", "data": "toy-fr"')):
        Recipe.from_file(path)


def test_a_recipe_with_a_byte_order_mark_is_read_in_its_encoding_and_other_bytes_are_refused(tmp_path):
    path = tmp_path / "recipe.json"
    for encoding in ("utf-8-sig", "utf-16", "utf-32"):  # Notepad's "Unicode" is UTF-16 with its mark
        path.write_text(json.dumps(RECIPE), encoding=encoding)
        assert Recipe.from_file(path).name == "tiny-copy"
    path.write_bytes(json.dumps({**RECIPE, "name": "caf\u00e9"}, ensure_ascii=False).encode("latin-1"))
    with pytest.raises(ConfigError, match=r"recipe\.json: not UTF-8 text \(invalid continuation byte at byte"):
        Recipe.from_file(path)


def test_a_missing_recipe_says_what_to_give(tmp_path):
    with pytest.raises(ConfigError, match=r"no recipe file at .*none\.json; give a recipe's JSON file"):
        Recipe.from_file(tmp_path / "none.json")


def test_a_shipped_models_name_reads_its_recipe_and_the_advice_names_the_installed_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no file of that name here: the shipped recipe is read
    assert Recipe.from_file("toy-fr-dot-luong") == Recipe.from_file(recipe_path("toy-fr-dot-luong"))
    assert Recipe.from_file("toy-fr-dot-luong.json") == Recipe.from_file(recipe_path("toy-fr-dot-luong"))
    with pytest.raises(ConfigError, match="or a shipped model's name") as e:
        Recipe.from_file("toy-fr-nope")
    assert str(recipe_path("toy-fr-dot-luong")) in str(e.value)


def test_the_shipped_recipes_are_far_below_the_limit():
    assert max(path.stat().st_size for path in recipe_path("x").parent.glob("*.json")) * 100 < MAX_RECIPE_BYTES


def test_a_recipe_stored_as_int8_is_measured_as_stored(tmp_path):
    """The metrics in an int8 checkpoint's header are those of the weights the file keeps, and the
    model handed back is that one too, not the float32 weights before storage."""
    recipe = Recipe(**{**RECIPE, "store": "int8"})
    out = tmp_path / "tiny.safetensors"
    trained = run_recipe(recipe, out)
    loaded = load_checkpoint(out)
    for name, weight in loaded.model.state_dict().items():
        assert torch.equal(trained.model.state_dict()[name], weight), name
    pairs = load_corpus(recipe.data, **recipe.data_options).split("test")
    again = evaluate(loaded, pairs, beam_size=recipe.eval_beam).to_dict()
    assert read_header(out)["meta"]["metrics"]["bleu"] == again["bleu"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", r"recipe\.json: not a JSON recipe \(Expecting property name"),
        ("", r"recipe\.json: not a JSON recipe \(Expecting value"),
        ("[]", r"recipe\.json: a recipe must be a JSON object$"),
        ('"tiny-copy"', r"recipe\.json: a recipe must be a JSON object$"),
    ],
)
def test_a_recipe_file_that_is_not_a_json_object_is_refused_naming_the_file(tmp_path, text, message):
    path = tmp_path / "recipe.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        Recipe.from_file(path)


def test_eval_valid_stores_the_validation_bleu_and_remeasure_rewrites_the_metrics_in_place(tmp_path):
    """A recipe with ``eval_valid`` (as the shipped Multi30k ones) stores the valid split's BLEU beside the
    test metrics; measuring the checkpoint again keeps its weights and writes the same numbers."""
    recipe = Recipe(**{**RECIPE, "train": {**RECIPE["train"], "epochs": 1}, "eval_valid": True})
    out = tmp_path / "tiny.safetensors"
    run_recipe(recipe, out)
    metrics = read_header(out)["meta"]["metrics"]
    assert metrics["split"] == "test" and metrics["n"] == 8
    assert set(metrics["valid"]) == {"n", "bleu", "bleu_cased"} and metrics["valid"]["n"] == 16
    assert 0.0 <= metrics["valid"]["bleu"] <= 100.0
    weights = load_checkpoint(out).model.state_dict()
    assert remeasure(recipe, out) == metrics
    assert read_header(out)["meta"]["metrics"] == metrics
    assert all(torch.equal(v, weights[k]) for k, v in load_checkpoint(out).model.state_dict().items())
    plain = Recipe(**{**RECIPE, "train": {**RECIPE["train"], "epochs": 1}})
    assert "valid" not in remeasure(plain, out)


def test_a_recipe_is_given_as_a_recipe_a_file_or_a_shipped_models_name(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps({**RECIPE, "train": {**RECIPE["train"], "epochs": 1}}), encoding="utf-8")
    model = run_recipe(str(path), evaluate_split=None)
    assert model.meta["name"] == "tiny-copy" and model.meta["epochs_run"] == 1
    with pytest.raises(ConfigError, match="give a recipe's JSON file"):
        run_recipe(tmp_path / "missing.json")


def test_a_model_too_big_for_its_epoch_checkpoints_is_refused_before_training(tmp_path, monkeypatch):
    """Every epoch is saved in full precision, whatever the store: a model over the checkpoint limit
    would train an epoch and then fail at its save with nothing written."""
    from attnviz.training import resume_state

    monkeypatch.setattr(resume_state, "MAX_CHECKPOINT_BYTES", 4096)  # the tiny model is ~20 KB in float32
    epochs = []
    recipe = Recipe.from_dict({**RECIPE, "store": "int8"})
    with pytest.raises(ConfigError, match=r"MiB in full precision.* at most 0 MiB\. Make it smaller"):
        run_recipe(recipe, tmp_path / "m.safetensors", callback=epochs.append)
    assert not epochs and not (tmp_path / "m.safetensors").exists()
    assert run_recipe(recipe, callback=epochs.append) is not None  # no file asked for: nothing to refuse
