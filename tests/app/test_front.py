"""Explore's front page drawn from its record while the library loads (attnviz_app/app_pages/explore/front.py):
recorded by a fresh visit, drawn as the same widgets, refused when torn or out of date."""

from __future__ import annotations

import json
import os

import pytest
from streamlit.testing.v1 import AppTest

from attnviz_app import loading
from attnviz_app.app_pages.explore import front
from tests.support.app import EXAMPLE
from tests.support.paths import APP


@pytest.fixture
def cache(app_env, tmp_path, monkeypatch):
    """A cache folder of this test: no record yet."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "attnviz" / front.FILE_NAME


def visit(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for name, value in query.items():
        at.query_params[name] = value
    return at.run()


def loading_library(monkeypatch, ready: bool = False) -> None:
    """The library not loaded yet, as on a fresh server (AppTest's process has it loaded)."""
    monkeypatch.setattr(loading, "library_ready", lambda: ready)


def test_a_fresh_visit_records_the_front_page(cache):
    at = visit()
    assert not at.exception, at.exception
    entry = json.loads(cache.read_text(encoding="utf-8"))
    assert entry["text"] == EXAMPLE and entry["view"] == "Weights" and entry["lexicon"] is True
    assert entry["views"][0] == "Weights" and len(entry["charts"]) == 1
    spec = json.loads(entry["charts"][0]["spec"])
    assert spec == json.loads(at.get("plotly_chart")[0].proto.spec)  # the very figure the page drew
    assert entry["lines"] and entry["lines"][0].startswith("**")
    assert front.load_record() == entry


def test_a_link_or_a_second_run_records_nothing(cache):
    visit(text="the cat eats the apple .")
    assert not cache.exists()
    at = visit()
    cache.unlink()
    at.text_input(key="explore_text").input("the girl eats .").run()
    assert not cache.exists()


def test_the_front_page_is_drawn_from_the_record_with_the_page_s_own_widgets(cache, monkeypatch):
    real = visit()
    loading_library(monkeypatch)
    at = visit()
    assert not at.exception, at.exception
    box = at.text_input(key="explore_text")
    assert box.value == EXAMPLE and box.id == real.text_input(key="explore_text").id  # the same widget
    assert [json.loads(c.proto.spec) for c in at.get("plotly_chart")] == [
        json.loads(real.get("plotly_chart")[0].proto.spec)
    ]
    assert at.sidebar.caption[0].value == front.LOADING and not at.sidebar.selectbox  # the choices come later
    loading_library(monkeypatch, ready=True)
    at.run()  # what the page's poll does once the library is loaded
    assert at.text_input(key="explore_text").value == EXAMPLE and at.sidebar.selectbox


def test_a_typed_sentence_waits_for_the_page_itself(cache, monkeypatch):
    visit()
    loading_library(monkeypatch)
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["explore_text"] = "the girl eats ."
    assert front.load_record() is not None
    loading_library(monkeypatch, ready=True)  # the page loads the library (here: already loaded)
    at.run()
    assert at.text_input(key="explore_text").value == "the girl eats ."
    assert at.sidebar.selectbox  # the page itself, not the record


def test_a_torn_record_is_ignored(cache):
    visit()
    whole = cache.read_text(encoding="utf-8")
    cache.write_text(whole[: len(whole) // 2], encoding="utf-8")
    assert front.load_record() is None
    cache.write_text(json.dumps({**json.loads(whole), "format": front.FORMAT + 1}), encoding="utf-8")
    assert front.load_record() is None


def test_a_changed_model_file_or_app_makes_the_record_stale(cache):
    visit()
    entry = json.loads(cache.read_text(encoding="utf-8"))
    model = entry["files"][0][0]
    stat = os.stat(model)
    os.utime(model, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert front.load_record() is None
    os.utime(model, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert front.load_record() == entry
    cache.write_text(json.dumps({**entry, "code": "another app"}), encoding="utf-8")
    assert front.load_record() is None


def test_a_cache_folder_that_cannot_be_written_is_no_error(cache):
    cache.parent.parent.mkdir(parents=True)
    cache.parent.write_text("a file where the folder should be", encoding="utf-8")  # mkdir fails, even as root
    at = visit()
    assert not at.exception and at.get("plotly_chart")
    assert not list(cache.parent.parent.glob("**/.*.tmp"))


def test_the_warm_up_waits_for_the_first_paint_of_a_record(monkeypatch):
    """Importing torch holds Python's lock: the server's warm-up starts it only once a first visitor's
    browser has drawn the page from its record (the page's first poll says so)."""
    import threading

    from attnviz_app import frame
    from attnviz_app.app_pages.shared import boot

    calls = []
    monkeypatch.setattr(boot, "warm_up", lambda: calls.append("warm"))
    monkeypatch.setattr(front, "load_record", lambda: {"charts": ["a map"]})
    monkeypatch.setattr(front, "painted", threading.Event())
    worker = threading.Thread(target=frame._warm_up)
    worker.start()
    worker.join(0.3)
    assert worker.is_alive() and not calls
    front.painted.set()
    worker.join(10)
    assert calls == ["warm"]


def test_a_page_drawn_long_ago_loads_the_library_itself(cache, monkeypatch):
    """A warm-up that failed never makes the library ready: after GIVE_UP_SECONDS the page stops
    waiting for it and runs the page itself, which loads the library (and says what is wrong)."""
    visit()
    loading_library(monkeypatch)
    at = visit()
    assert at.sidebar.caption[0].value == front.LOADING
    at.session_state["_explore_front_drawn_at"] -= front.GIVE_UP_SECONDS + 1
    at.run()
    assert at.sidebar.selectbox and at.text_input(key="explore_text").value == EXAMPLE  # the page itself


def test_a_sentence_typed_on_the_record_after_the_library_is_ready_gets_its_own_entry(cache, monkeypatch):
    """The record drawn, the library ready before the poll's rerun, then Enter: the first run of the
    page itself shows the typed sentence, which is an action on the front page, so it is written to the
    URL (a new entry that Back leaves), not taken for the first visit's state."""
    visit()
    loading_library(monkeypatch)
    at = visit()
    assert at.sidebar.caption[0].value == front.LOADING  # drawn from the record
    loading_library(monkeypatch, ready=True)
    at.text_input(key="explore_text").input("the girl eats .").run()
    assert not at.exception, at.exception
    assert at.sidebar.selectbox and at.query_params.get("text") == "the girl eats ."


def test_the_warm_up_imports_numpy_and_pandas_only_between_a_record_s_chart_validations(cache, monkeypatch):
    """Plotly looks numpy and pandas up in sys.modules: a record's charts are validated under front.plotting,
    and the warm-up imports them under it, so a chart never meets a half-imported pandas."""
    import threading

    import streamlit as st

    from attnviz_app import frame
    from attnviz_app.app_pages.shared import boot

    visit()
    loading_library(monkeypatch)
    held = []
    draw = st.plotly_chart
    monkeypatch.setattr(st, "plotly_chart", lambda *a, **k: held.append(front.plotting.locked()) or draw(*a, **k))
    assert not visit().exception
    assert held == [True]  # the record's one chart, validated under the lock

    calls = []
    monkeypatch.setattr(boot, "warm_up", lambda: calls.append("warm"))
    monkeypatch.setattr(front, "painted", threading.Event())
    front.painted.set()
    with front.plotting:  # a session validating a record's chart
        worker = threading.Thread(target=frame._warm_up)
        worker.start()
        worker.join(0.3)
        assert worker.is_alive() and not calls
    worker.join(10)
    assert calls == ["warm"]


def test_the_warm_up_waits_for_a_visitor_whose_page_is_being_drawn_past_the_first_wait(monkeypatch):
    """With no visitor after ATTNVIZ_FIRST_PAINT_WAIT seconds the warm-up goes on; a visitor whose page is
    being drawn from the record by then (a slow browser) is waited for, so torch's import does not race
    that page."""
    import threading

    monkeypatch.setenv(front.WAIT_ENV, "0.05")
    monkeypatch.setattr(front, "painted", threading.Event())
    monkeypatch.setattr(front, "drawing", threading.Event())
    front.wait_for_first_paint()  # nobody came: returns after 0.05 s

    front.drawing.set()
    worker = threading.Thread(target=front.wait_for_first_paint)
    worker.start()
    worker.join(0.5)
    assert worker.is_alive()  # past the first wait, the visitor's paint is awaited
    front.painted.set()
    worker.join(10)
    assert not worker.is_alive()


@pytest.mark.parametrize(
    ("raw", "seconds"), [("", 5.0), ("30", 30.0), ("0", 0.0), ("soon", 5.0), ("-1", 5.0), ("inf", 5.0), ("nan", 5.0)]
)
def test_the_first_paint_wait_is_read_from_the_environment(monkeypatch, raw, seconds):
    monkeypatch.setenv(front.WAIT_ENV, raw)
    assert front.first_paint_wait() == seconds


def test_a_sentence_typed_while_the_page_s_first_run_is_cut_short_gets_its_own_entry(cache, monkeypatch):
    """The library ready, the page's first run replaces the record and is cut short by an Enter before it
    writes its URL: the typed sentence is still an action on the record, a new entry that Back leaves."""
    import streamlit as st

    from attnviz_app.app_pages.explore import page

    visit()
    loading_library(monkeypatch)
    at = visit()
    assert at.sidebar.caption[0].value == front.LOADING  # drawn from the record
    loading_library(monkeypatch, ready=True)
    translate = page.translate
    monkeypatch.setattr(page, "translate", lambda *a: st.stop())  # cut short while it decodes (an Enter)
    at.run()
    monkeypatch.setattr(page, "translate", translate)
    at.text_input(key="explore_text").input("the girl eats .").run()
    assert not at.exception, at.exception
    assert at.query_params.get("text") == "the girl eats ."
