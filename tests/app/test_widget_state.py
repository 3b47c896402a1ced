"""What a user sets on a page is still there after a visit to another page: every keyed control of
the app keeps its value for the session (``persist_state="session"``), but for the few whose value
the page itself sets on every run. Checked in the source (every control) and in AppTest (a control
of each page that had lost its value: Compare, Data, Your model, Learn)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.support.paths import APP

PAGES = Path(APP).parent / "attnviz_app"
CONTROLS = {
    "checkbox", "multiselect", "number_input", "pills", "radio", "segmented_control", "select_slider",
    "selectbox", "slider", "text_area", "text_input", "toggle",
}  # fmt: skip
SET_BY_THE_PAGE = {  # (file, control's label): why the page, not the widget, holds its value
    ("explore/sidebar.py", "f'{MODES[style]} checkpoint'"): "the checkpoint the URL and the model grid name",
    ("explore/views.py", "label"): "the outlined cell's boxes, set from the click on every run",
    ("train/probe.py", "'Use a sentence'"): "lit when the probe box holds its sentence, else none",
    ("train/train.py", "'Model'"): "the sibling a Train-it button asked for",
}


def keyed_controls() -> list[tuple[str, str, bool]]:
    """(file under attnviz_app/, the label's source, whether it persists) of every keyed control."""
    found = []
    for path in sorted(PAGES.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in CONTROLS:
                options = {k.arg: k.value for k in node.keywords}
                if "key" not in options:
                    continue
                persists = isinstance(options.get("persist_state"), ast.Constant) and (
                    options["persist_state"].value == "session"
                )
                label = ast.unparse(node.args[0]) if node.args else ast.unparse(options.get("label", ast.Constant("")))
                found.append((path.relative_to(PAGES).as_posix().removeprefix("app_pages/"), label, persists))
    return found


def test_every_keyed_control_keeps_its_value_for_the_session_but_those_the_page_sets():
    controls = keyed_controls()
    assert len(controls) > 100  # the scan sees the pages' controls
    forgetful = {(f, label) for f, label, persists in controls if not persists}
    assert forgetful == set(SET_BY_THE_PAGE)


def there_and_back(at: AppTest, page: str) -> AppTest:
    at.switch_page("attnviz_app/app_pages/learn.py").run()
    assert not at.exception, at.exception
    at.switch_page(f"attnviz_app/app_pages/{page}").run()
    assert not at.exception, at.exception
    return at


def opened(page: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page(f"attnviz_app/app_pages/{page}").run()
    assert not at.exception, at.exception
    return at


def test_compares_test_pair_outlives_another_page(app_env):
    at = opened("compare.py")
    at.toggle(key="cmp_use_pair").set_value(True).run()
    at.number_input(key="cmp_pair").set_value(3).run()
    at = there_and_back(at, "compare.py")
    assert at.toggle(key="cmp_use_pair").value
    assert at.number_input(key="cmp_pair").value == 3


def test_datas_pair_and_search_outlive_another_page(app_env):
    at = opened("data.py")
    at.number_input(key="data_pair").set_value(5)
    at.text_input(key="data_lexicon_q").set_value("cat").run()
    at = there_and_back(at, "data.py")
    assert at.number_input(key="data_pair").value == 5
    assert at.text_input(key="data_lexicon_q").value == "cat"


def test_your_models_folder_and_sentence_outlive_another_page(app_env, tmp_path):
    at = opened("yours/yours.py")
    at.text_input(key="yours_hf_path").set_value(str(tmp_path / "no-such-model")).run()
    at = there_and_back(at, "yours/yours.py")
    assert at.text_input(key="yours_hf_path").value == str(tmp_path / "no-such-model")


@pytest.mark.parametrize("key, value", [("learn_query", "1, 0"), ("learn_keys", "1, 0; 0, 1")])
def test_learns_worked_example_outlives_another_page(app_env, key, value):
    at = opened("learn.py")
    at.text_input(key=key).set_value(value).run()
    at.switch_page("attnviz_app/app_pages/data.py").run()
    at.switch_page("attnviz_app/app_pages/learn.py").run()
    assert not at.exception, at.exception
    assert at.text_input(key=key).value == value
