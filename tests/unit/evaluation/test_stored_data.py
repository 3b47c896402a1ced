"""What a checkpoint says about its data is untrusted: only a built-in task, a Multi30k pair at the
default folder or a table in the models or uploads folder, with known data options of their
types, is read back; anything else asks for
--data in one line, never reads a path, a folder or the Hub, never raises a traceback."""

from __future__ import annotations

import pytest

from attnviz.errors import ConfigError
from attnviz.evaluation.evaluate import measured_on
from tests.support.checkpoints import rewrite
from tests.support.cli import run

HOSTILE = [
    "/etc/passwd?src=root&tgt=x&format=tsv",
    "multi30k-de-en@/root",
    "hf:attacker/data?src=a&tgt=b",
    "../../secret.csv?src=a&tgt=b",
    ["toy-fr"],
]


@pytest.mark.parametrize("spec", HOSTILE, ids=str)
def test_a_stored_data_spec_naming_a_path_a_folder_or_the_hub_is_never_read(spec):
    with pytest.raises(ConfigError, match="--data") as caught:
        measured_on({"recipe_full": {"data": spec, "data_options": {}}})
    assert "\n" not in str(caught.value)
    with pytest.raises(ConfigError, match="--data"):
        measured_on({"task": spec})


@pytest.mark.parametrize("options", [{"evil": 1}, {"n_test": "5"}, {"lowercase": 1}, {"n_test": 10**9}, [1]], ids=str)
def test_stored_data_options_must_be_known_and_of_their_type(options):
    with pytest.raises(ConfigError, match="--data"):
        measured_on({"recipe_full": {"data": "toy-fr", "data_options": options}})


def test_built_in_tasks_and_multi30k_pairs_are_read_back_with_their_options():
    meta = {"recipe_full": {"data": "toy-fr", "data_options": {"n_test": 50, "seed": 1, "test_fraction": 0.1}}}
    assert measured_on(meta) == ("toy-fr", {"n_test": 50, "seed": 1, "test_fraction": 0.1})
    m30k = {"recipe_full": {"data": "multi30k-de-en", "data_options": {"subwords": [8000, 0], "max_len": None}}}
    assert measured_on(m30k) == ("multi30k-de-en", {"max_len": None})
    assert measured_on({"task": "dates"}) == ("dates", {})
    assert measured_on({"recipe_full": {"data": "/etc/passwd?src=a&tgt=b"}}, data="toy-fr") == ("toy-fr", {})


@pytest.mark.parametrize(
    ("data", "options"),
    [("/etc/passwd?src=root&tgt=x&format=tsv", {}), ("multi30k-de-en@/root", {}), ("reverse", {"evil": 1})],
)
def test_evaluate_refuses_a_checkpoint_that_names_hostile_data(capsys, models, model_file, data, options):
    def edit(h):
        return {**h, "meta": {**h["meta"], "recipe_full": {"data": data, "data_options": options}}}

    rewrite(model_file, models / "hostile.safetensors", attnviz=edit)
    code, out, err = run(capsys, "evaluate", "--model", "hostile", "--n", "4")
    assert code != 0 and "--data" in err and "Traceback" not in err
    assert "root:" not in out + err and "/root" not in out.replace(data, "")
    code, out, _ = run(capsys, "evaluate", "--model", "hostile", "--data", "reverse", "--n", "4", "--json")
    assert code == 0 and '"n": 4' in out


def test_a_stored_file_is_read_back_only_inside_the_models_or_uploads_folder(tmp_path, monkeypatch):
    """The app's uploads and files kept beside the models are the user's own; anywhere else is not."""
    monkeypatch.setenv("ATTNVIZ_MODELS", str(tmp_path / "models"))
    (tmp_path / "models").mkdir()
    inside, outside = tmp_path / "models" / "pairs.tsv", tmp_path / "pairs.tsv"
    for path in (inside, outside):
        path.write_text("en\tfr\na\tb\n", encoding="utf-8")
    spec = f"{inside}?src=en&tgt=fr"
    assert measured_on({"recipe_full": {"data": spec, "data_options": {}}}) == (spec, {})
    with pytest.raises(ConfigError, match="models or uploads folder"):
        measured_on({"recipe_full": {"data": f"{outside}?src=en&tgt=fr", "data_options": {}}})


def test_a_model_trained_on_an_upload_asks_for_data_named():
    """Said to a command-line user too, who has no sessions: where the data went, and what to give instead."""
    with pytest.raises(ConfigError) as e:
        measured_on({"private": True, "recipe_full": {"data": "/tmp/up/x.csv?src=a&tgt=b"}})
    assert str(e.value) == (
        "this model was trained on a file uploaded to the app, private to the session that uploaded it; measure "
        "it on data you name (--data SPEC)"
    )
    assert measured_on({"private": True}, data="dates") == ("dates", {})
