"""AppTest for the Your model page's attention file source: an upload shows its matrices; a malformed
one gets one message and no traceback."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from attnviz.external import EXAMPLE_ATTENTION
from tests.support.paths import APP


def attention_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("pages/yours/yours.py").run()
    at.segmented_control(key="yours_source").set_value("Attention file").run()
    assert not at.exception, at.exception
    return at


def test_an_attention_file_is_drawn_matrix_by_matrix():
    at = attention_page()
    at.file_uploader(key="yours_file_upload").set_value(
        ("mine.json", json.dumps(EXAMPLE_ATTENTION).encode(), "application/json")
    ).run()
    assert not at.exception and not at.error
    assert at.selectbox(key="yours_file_matrix").options == ["layer 0 head 0", "layer 0 head 1"]
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert "black" in json.dumps(spec)


def test_a_malformed_attention_file_gets_one_message():
    at = attention_page()
    bad = {**EXAMPLE_ATTENTION, "matrices": [{"name": "m", "weights": [[0.5, 0.5]]}]}
    at.file_uploader(key="yours_file_upload").set_value(
        ("bad.json", json.dumps(bad).encode(), "application/json")
    ).run()
    assert not at.exception
    assert len(at.error) == 1 and "field 'weights' has shape \\(1, 2\\)" in at.error[0].value  # escaped Markdown
