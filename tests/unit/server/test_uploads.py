"""The uploads service without Streamlit: files held by sessions and trainings, deleted when
their last holder is gone; a session ends once its web server's reconnect window has passed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from attnviz.data import table_columns
from attnviz.errors import DataError
from attnviz.server import upload_folder, upload_ledger, web_sessions
from tests.support.uploads import use_fresh_uploads

ROWS = b"en,fr\n" + b"".join(b"the cat %d,le chat %d\n" % (i, i) for i in range(10))


@pytest.fixture(autouse=True)
def fresh(tmp_path, monkeypatch) -> Path:
    """Uploads and their ledger in a temporary folder; the web server the test installs is
    forgotten afterwards."""
    use_fresh_uploads(tmp_path / "uploads", monkeypatch)
    monkeypatch.setattr(web_sessions, "_web", web_sessions._web)
    yield tmp_path
    upload_folder.server_folder.cache_clear()


class FakeServer:
    """A web server's view of its sessions, set by the test."""

    def __init__(self, window: float) -> None:
        self.window, self.connected, self.freed = window, {}, []

    def install(self) -> None:
        web = web_sessions.WebSessions(lambda: self.window, self.connected.get, self.freed.append)
        web_sessions.use_web_sessions(web)


def test_an_upload_is_stored_once_by_content_and_deleted_with_its_last_holder():
    alive = lambda: True  # noqa: E731
    first = upload_ledger.store_upload(ROWS, "pairs.csv", "a", alive)
    second = upload_ledger.store_upload(ROWS, "other name.csv", "b", alive)
    assert first == second and first.kept_rows is None and first.path.parent == upload_folder.server_folder()
    assert first.path.suffix == ".csv" and "pairs" not in first.path.name  # named by its content
    assert upload_ledger.release_upload(first.path, "a") is False and first.path.is_file()
    assert upload_ledger.release_upload(first.path, "b") is True and not first.path.exists()


def test_a_utf16_table_is_stored_as_utf8_and_read():
    stored = upload_ledger.store_upload(ROWS.decode().encode("utf-16"), "excel.csv", "a", lambda: True)
    assert stored.path.read_bytes() == ROWS and table_columns(stored.path) == ["en", "fr"]


def test_an_upload_over_the_row_limit_keeps_its_first_rows(monkeypatch):
    monkeypatch.setattr(upload_ledger, "MAX_UPLOAD_ROWS", 3)
    stored = upload_ledger.store_upload(ROWS, "big.tsv.csv", "a", lambda: True)
    assert stored.kept_rows == 3
    assert stored.path.read_bytes() == b"".join(ROWS.splitlines(keepends=True)[:4])  # the header and 3 rows


def test_without_a_web_server_a_session_ends_when_it_disconnects():
    web_sessions.use_web_sessions(web_sessions.WebSessions())  # the default: no server
    stored = upload_ledger.store_upload(ROWS, "pairs.csv", "s", web_sessions.session_seen("s"))
    upload_ledger.collect()
    assert stored.path.is_file()  # never seen to leave
    web_sessions.session_disconnected("s")
    upload_ledger.collect()
    assert not stored.path.exists()


def test_a_disconnected_session_ends_after_the_reconnect_window_unless_it_came_back():
    server = FakeServer(window=60.0)
    server.install()
    stored = upload_ledger.store_upload(ROWS, "pairs.csv", "s", web_sessions.session_seen("s"))
    web_sessions.session_disconnected("s")
    upload_ledger.collect()
    assert stored.path.is_file() and server.freed == []  # within the window
    server.window, server.connected["s"] = 0.0, True  # back
    upload_ledger.collect()
    assert stored.path.is_file() and server.freed == []
    server.connected["s"] = False  # gone again, and the window has passed
    upload_ledger.collect()
    assert not stored.path.exists() and set(server.freed) == {"s"}  # the server's copy of its bytes is freed too


def test_a_training_keeps_its_upload_until_it_stops():
    running = True
    stored = upload_ledger.store_upload(ROWS, "pairs.csv", "s", lambda: False)
    upload_ledger.hold_for_training(f"{stored.path}?src=en&tgt=fr", "run-1", lambda: running)
    upload_ledger.collect()
    assert stored.path.is_file()  # its session is gone, the training reads it
    running = False
    upload_ledger.collect()
    assert not stored.path.exists()


def test_a_training_on_a_file_that_is_no_upload_holds_nothing(tmp_path):
    table = tmp_path / "mine.csv"
    table.write_bytes(ROWS)
    upload_ledger.hold_for_training(f"{table}?src=en&tgt=fr", "run-1", lambda: False)
    upload_ledger.collect()
    assert table.is_file()


def test_importing_the_apps_uploads_module_plugs_streamlits_sessions_in():
    from streamlit import config

    from attnviz_app.app_pages.shared.uploads import STREAMLIT_SESSIONS

    assert web_sessions._web is STREAMLIT_SESSIONS
    assert web_sessions.reconnect_window() == float(config.get_option("server.disconnectedSessionTTL"))
    assert STREAMLIT_SESSIONS.connected("no such session") is None  # no Streamlit server runs here


def test_a_full_disk_stores_nothing_under_the_tables_hash_and_the_retry_is_whole(monkeypatch):
    import errno

    real_replace = os.replace

    def full(*args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(DataError, match=r"could not store the upload \(No space left on device\)"):
        upload_ledger.store_upload(ROWS, "pairs.csv", "a", lambda: True)
    assert list(upload_folder.server_folder().iterdir()) == []  # no torn table, no temporary file
    monkeypatch.setattr(os, "replace", real_replace)
    stored = upload_ledger.store_upload(ROWS, "pairs.csv", "a", lambda: True)
    assert stored.path.read_bytes() == ROWS


def test_an_unusable_upload_root_is_one_message_naming_tmpdir(fresh, monkeypatch):
    (fresh / "in the way").write_text("x")
    use_fresh_uploads(fresh / "in the way", monkeypatch)
    with pytest.raises(DataError, match="set TMPDIR to a folder of yours"):
        upload_ledger.store_upload(ROWS, "pairs.csv", "a", lambda: True)


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX user numbers")
def test_the_upload_root_is_the_users_own_so_another_users_server_is_no_obstacle():
    from attnviz.store import upload_root

    assert upload_root().name == f"attnviz-uploads-{os.getuid()}"
