"""Evaluate's "measure now" (AppTest, tiny models): its metrics stand beside the model's name, and a
chosen model whose checkpoint broke before the run is said not to be measured. (At 1280 px a long
Multi30k name and its task pushed AER and entropy out of view; a broken model vanished from the results
while the status said 'Evaluated 1 of 1'.)"""

from __future__ import annotations

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
