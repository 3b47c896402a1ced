"""The Train page after a reload mid-training (AppTest): the training whose page went away is stopping
before it waits as an unfinished one; the page says so, and does not count it against the server's
limit. (It said only 'The server is training 1 model(s), its limit; Start will be refused', and never
updated itself.)"""

from __future__ import annotations

from types import SimpleNamespace

from streamlit.testing.v1 import AppTest

from tests.support.paths import APP

NOTE = "is stopping at its last finished epoch"


def open_train(monkeypatch, jobs: list) -> AppTest:
    from attnviz.server import REGISTRY

    monkeypatch.setattr(REGISTRY, "active", lambda: jobs)
    monkeypatch.setattr(REGISTRY, "running", lambda: sum(not j.leaving() for j in jobs))
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("attnviz_app/app_pages/train/train.py").run()
    assert not at.exception, at.exception
    return at


def test_a_training_whose_page_went_away_is_said_to_be_stopping(app_env, monkeypatch):
    jobs = [SimpleNamespace(leaving=lambda: True, owner=None)]
    at = open_train(monkeypatch, jobs)
    assert any(NOTE in i.value for i in at.info)
    assert not any("its limit" in w.value for w in at.warning)  # its slot is free already
    jobs.clear()  # it stopped, and waits with the unfinished trainings
    at.run()
    assert not any(NOTE in i.value for i in at.info)


def test_another_session_s_private_training_is_not_announced(app_env, monkeypatch):
    at = open_train(monkeypatch, [SimpleNamespace(leaving=lambda: True, owner="another-session")])
    assert not any(NOTE in i.value for i in at.info)


def test_a_running_training_still_counts_against_the_limit(app_env, monkeypatch):
    monkeypatch.setenv("ATTNVIZ_MAX_TRAININGS", "1")
    at = open_train(monkeypatch, [SimpleNamespace(leaving=lambda: False, owner=None)])
    assert any("its limit" in w.value for w in at.warning) and not any(NOTE in i.value for i in at.info)
