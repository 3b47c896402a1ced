"""Compare on a machine without the models' data (an installed wheel, a clone elsewhere): the page
still compares the models on a typed sentence, and says why it offers no test pairs."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from attnviz.data import MULTI30K_ENV
from attnviz_app.app_pages.shared import model_ui
from tests.support.paths import APP


def test_a_missing_multi30k_folder_leaves_compare_working(app_env, monkeypatch, tmp_path):
    absent = tmp_path / "no-multi30k"
    monkeypatch.setenv(MULTI30K_ENV, str(absent))
    monkeypatch.setattr(model_ui, "measured_on", lambda meta: ("multi30k-de-en", {}))  # as a Multi30k model's
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("attnviz_app/app_pages/compare.py").run()
    assert not at.exception, at.exception
    assert not at.error  # no red box stopping the page
    notes = " ".join(c.value for c in at.caption).replace("\\", "")  # the captions escape Markdown
    assert "No test pairs for this model" in notes and str(absent) in notes and MULTI30K_ENV in notes
    assert at.table and at.radio  # it went on: the models' translations, what to align them on
    assert not [t for t in at.toggle if t.key == "cmp_use_pair"]  # no test pair to pick
