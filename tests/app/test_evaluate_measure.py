"""Evaluate's "measure now" (AppTest, tiny models): its metrics stand beside the model's name, and a
chosen model whose checkpoint broke before the run is said not to be measured. (At 1280 px a long
Multi30k name and its task pushed AER and entropy out of view; a broken model vanished from the results
while the status said 'Evaluated 1 of 1'.)"""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from tests.support.paths import APP


def evaluate_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("attnviz_app/app_pages/evaluate.py").run()
    assert not at.exception, at.exception
    return at


def measure(at: AppTest, names: list[str]) -> AppTest:
    at.multiselect(key="eval_models").set_value(names)
    at.number_input(key="eval_n").set_value(10)
    return at.button(key="eval_go").click().run()


def test_the_metrics_come_right_after_the_model(app_env):
    at = measure(evaluate_page(), ["toyfr-general-luong"])
    assert not at.exception
    columns = list(at.dataframe[-1].value.columns)
    assert columns[:5] == ["model", "bleu", "exact_match", "aer", "entropy"] and "task" in columns[5:]


def test_the_tables_are_headed_as_the_leaderboard_is_not_by_their_keys(app_env):
    at = measure(evaluate_page(), ["toyfr-general-luong"])
    stored, measured = (json.loads(table.proto.columns) for table in (at.dataframe[0], at.dataframe[-1]))
    labels = {key: column.get("label") for key, column in stored.items()}
    assert labels["bleu"] == "BLEU" and labels["valid_bleu"] == "valid BLEU" and labels["exact_match"] == "exact match"
    assert labels["train_seconds"] == "train time (s)" and measured["n"]["label"] == "pairs"
    assert list(at.dataframe[0].value.columns)[:2] == ["model", "task"]  # the keys stay, for sorting and the CSV
    assert set(at.dataframe[0].value["style"]) <= {"Bahdanau", "Luong"}


def test_enter_in_a_box_of_the_form_does_not_start_a_measurement(app_env):
    """Measuring takes seconds to minutes: the button starts it, an Enter that commits a number does not."""
    assert evaluate_page().get("form")[0].proto.form.enter_to_submit is False


def test_a_model_whose_checkpoint_broke_before_the_run_is_said_not_measured(app_env):
    at = evaluate_page()
    at.session_state["eval_known"] = [*at.session_state["eval_known"], "victim"]  # listed when the page was drawn
    at = measure(at, ["toyfr-general-luong"])
    assert not at.exception
    assert any("Not measured: victim" in w.value for w in at.warning)
    assert list(at.dataframe[-1].value["model"]) == ["toyfr-general-luong"]
    at.run()  # the next run without a press says nothing more
    assert not any("Not measured" in w.value for w in at.warning)


def test_a_broken_checkpoint_is_named_once_in_the_notice(app_models_copy):
    """(The notice read 'Skipped: skipped x.safetensors: ...'.)"""
    (app_models_copy / "x.safetensors").write_bytes(b"junkjunk")
    at = evaluate_page()
    notices = [c.value.replace("\\", "") for c in at.caption if "Skipped" in c.value]
    assert len(notices) == 1 and notices[0].startswith("⚠️ Skipped x.safetensors: ") and "skipped" not in notices[0]


def test_the_measured_table_and_its_file_say_what_was_measured(app_env, download_names):
    """(Every measurement downloaded as leaderboard_sample.csv, without its split, beam or device.)"""
    at = evaluate_page()
    at.number_input(key="eval_beam").set_value(2)
    at.selectbox(key="eval_split").set_value("valid")
    at = measure(at, ["toyfr-general-luong"])
    assert not at.exception
    table = at.dataframe[-1].value
    assert (table["split"][0], table["beam"][0], table["device"][0]) == ("valid", 2, "cpu")
    assert download_names["Download CSV"] == "evaluate-valid-n10-beam2-cpu.csv"
    at.number_input(key="eval_beam").set_value(3).run()  # a setting changed, not measured: the table keeps its own
    assert at.dataframe[-1].value["beam"][0] == 2


def test_the_progress_names_each_model_not_its_file(app_env):
    at = measure(evaluate_page(), ["toyfr-general-luong"])
    texts = [p.proto.text for p in at.get("progress")]
    assert texts == ["1/1: toyfr-general-luong"]


def test_the_measured_numbers_are_those_of_the_split_and_beam_chosen(app_env, monkeypatch):
    """The row's numbers are the library's for the split the form asked for, and the run used its beam, not
    only its labels. (The labels come from the form: a page that measured `test` at beam 1 still read
    'valid, 2'.) The tiny model's numbers are the same at beams 1 and 2, so the beam is read off the call."""
    import attnviz.evaluation as evaluation
    from attnviz.store import catalog

    real, calls = evaluation.evaluate_checkpoints, []

    def recorded(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(evaluation, "evaluate_checkpoints", recorded)
    at = evaluate_page()
    at.number_input(key="eval_beam").set_value(2)
    at.selectbox(key="eval_split").set_value("valid")
    at = measure(at, ["toyfr-general-luong"])
    assert not at.exception
    assert [(c["split"], c["n"], c["beam_size"]) for c in calls] == [("valid", 10, 2)]
    shown = at.dataframe[-1].value.iloc[0]
    path = next(m.path for m in catalog.list_models() if m.name == "toyfr-general-luong")

    def numbers(split: str) -> tuple:
        [row] = real([path], split=split, n=10, beam_size=2, roots=catalog.model_roots()).rows
        return tuple(round(float(row[k]), 3) for k in ("bleu", "exact_match", "aer", "entropy"))

    assert tuple(round(float(shown[k]), 3) for k in ("bleu", "exact_match", "aer", "entropy")) == numbers("valid")
    assert numbers("valid") != numbers("test")  # the split shows in the numbers
