"""AppTest for the Data page (tiny app models): a task's table, gold alignments and the toy-fr lexicon,
histograms of whole tokens, every pair of the split reachable and no more, a bounded size to generate."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from tests.support.paths import APP


def data_page() -> AppTest:
    """The app opened on the Data page, through app.py's navigation."""
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("attnviz_app/app_pages/data.py").run()
    assert not at.exception, at.exception
    return at


def figures(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def test_data_table_gold_and_lexicon(app_env):
    at = data_page()
    at.number_input(key="data_n").set_value(30).run()
    assert at.dataframe[0].value.shape[0] == 30
    assert any("Gold alignment" in f["layout"]["title"]["text"] for f in figures(at) if "title" in f["layout"])
    at.text_input(key="data_lexicon_q").set_value("chat").run()
    lexicon = at.dataframe[-1].value
    assert "cat" in set(lexicon["English"])


def test_data_histograms_have_whole_token_bins(app_env):
    at = data_page()
    hist = [f for f in figures(at) if f["data"] and f["data"][0]["type"] == "histogram"]
    assert len(hist) == 2
    for fig in hist:
        bins = fig["data"][0]["xbins"]
        assert bins["size"] == int(bins["size"]) and (bins["start"] + 0.5) == int(bins["start"] + 0.5)
        assert "source_len" not in fig["layout"]["title"]["text"]


def test_the_last_pair_number_shows_the_last_pair(app_env):
    at = data_page()
    at.number_input(key="data_n").set_value(30).run()
    last = at.number_input(key="data_pair")
    assert last.max == 29  # 30 pairs, numbered from 0
    last.set_value(last.max).run()
    assert not at.exception, at.exception
    shown = next(t.value for t in at.text if "→" in t.value)
    assert shown == "  →  ".join(at.dataframe[0].value.iloc[-1][["Source", "Target"]])


def test_a_task_generates_at_most_5000_pairs_per_split(app_env):
    # each split of a generated task is built on the server, in memory
    assert data_page().number_input(key="data_n").max == 5000


def test_an_upload_still_to_come_says_where_to_choose_the_data(app_env):
    """The main column is not left blank while the sidebar waits for a file (or says why one was refused)."""
    at = data_page()
    at.radio(key="data_kind").set_value("Uploaded file").run()
    assert not at.exception
    assert "Choose the data in the sidebar; if a file cannot be read, the sidebar says why." in [
        i.value for i in at.info
    ]
