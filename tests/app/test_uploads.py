"""Uploads stay bounded and are released: when their session ends, when a new file replaces them,
when their server is gone; a training keeps the upload it reads; corpora of uploads are bounded; the
Data page shows an uploaded file's name literally and offers its nested fields.

The end of a session is simulated as Streamlit performs it: ``AppSession.clear_session_caches``
(what a disconnect calls) releases the session's session-scoped caches, and the session does not
come back within ``server.disconnectedSessionTTL``. ``tests/browser/test_uploads.py`` does it for
real: Chromium uploads a file to ``streamlit run``, closes the tab, and the file goes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit import config
from streamlit.runtime import caching
from streamlit.testing.v1 import AppTest

from attnviz.data import corpora
from attnviz.server import table_head, upload_folder, upload_ledger, web_sessions
from attnviz.store import files
from attnviz_app.app_pages.shared import data_ui
from tests.support.paths import APP
from tests.support.tables import PAIRS, ROWS
from tests.support.uploads import use_fresh_uploads

SESSION = "test session id"  # AppTest's session id


@pytest.fixture
def fresh(tmp_path, monkeypatch) -> Path:
    """Uploads, their ledger and the datasets cache in a temporary folder; sessions end as soon
    as they disconnect (no reconnect window)."""
    use_fresh_uploads(tmp_path / "uploads", monkeypatch)
    monkeypatch.setattr(web_sessions, "reconnect_window", lambda: 0.0)
    monkeypatch.setattr(corpora, "CACHE_DIR", tmp_path / "datasets")
    monkeypatch.setenv("ATTNVIZ_MODELS", str(tmp_path / "models"))
    caching.clear_session_resource_cache(SESSION)
    caching.clear_session_data_cache(SESSION)
    yield tmp_path
    caching.clear_session_resource_cache(SESSION)
    caching.clear_session_data_cache(SESSION)
    upload_folder.server_folder.cache_clear()


def data_page(upload: tuple[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("attnviz_app/app_pages/data.py").run()
    at.radio(key="data_kind").set_value("Uploaded file").run()
    if upload:
        return send(at, *upload)
    return at


def send(at: AppTest, name: str, text: str) -> AppTest:
    at.file_uploader(key="data_upload").set_value((name, text.encode(), "text/csv"))
    at.run()
    assert not at.exception
    return at


def stored() -> list[Path]:
    return sorted(upload_folder.server_folder().iterdir())


def end_session() -> None:
    """What Streamlit does when the tab's websocket closes, then the reconnect window passes."""
    caching.clear_session_resource_cache(SESSION)  # AppSession.clear_session_caches on disconnect
    caching.clear_session_data_cache(SESSION)
    upload_ledger.collect()  # the janitor's round after the window


def test_a_sessions_upload_is_deleted_once_the_session_ends(fresh):
    at = data_page(("pairs.csv", ROWS))
    assert [m.value for m in at.metric][:3] == ["54", "3", "3"]
    [path] = stored()
    upload_ledger.collect()
    assert path.is_file()  # the session lives: its upload stays
    end_session()
    assert not path.exists() and stored() == []
    assert not any(fresh.joinpath("datasets").rglob("*.arrow"))  # no Arrow copy of it either


def test_a_session_that_reconnects_keeps_its_upload(fresh, monkeypatch):
    monkeypatch.setattr(web_sessions, "reconnect_window", lambda: 60.0)
    at = data_page(("pairs.csv", ROWS))
    [path] = stored()
    end_session()  # disconnected, but within the window
    assert path.is_file()
    at.run()  # back: it runs again
    monkeypatch.setattr(web_sessions, "reconnect_window", lambda: 0.0)
    upload_ledger.collect()
    assert path.is_file() and not at.exception


def test_a_replaced_upload_is_deleted_with_its_corpora(fresh):
    at = data_page(("first.csv", ROWS))
    [first] = stored()
    send(at, "second.csv", ROWS.replace("cat", "dog"))
    [second] = stored()
    assert second != first and not first.exists()
    assert any("the dog" in str(v) for frame in at.dataframe for v in frame.value["Source"])
    assert not any(fresh.joinpath("datasets").rglob("*"))  # neither file left an Arrow copy


def test_a_replaced_upload_a_training_reads_stays_until_the_training_ends(fresh):
    at = data_page(("first.csv", ROWS))
    [first] = stored()
    running = True
    upload_ledger.hold_for_training(f"{first}?src=en&tgt=fr", "mine", lambda: running)
    send(at, "second.csv", ROWS.replace("cat", "dog"))
    end_session()
    assert first.is_file()  # replaced, its session gone: the training still reads it
    running = False
    upload_ledger.collect()
    assert not first.exists()


def test_a_training_started_on_the_train_page_keeps_its_upload_after_the_session_ends(fresh):
    from attnviz.server.jobs import REGISTRY

    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("attnviz_app/app_pages/train/train.py").run()
    at.radio(key="train_kind").set_value("Uploaded file").run()
    at.file_uploader(key="train_upload").set_value(("pairs.csv", ROWS.encode(), "text/csv")).run()
    at.number_input(key="train_epochs").set_value(50).run()
    at.button(key="train_start").click().run()
    job = REGISTRY.get(SESSION)
    try:
        assert job is not None and not at.exception
        [path] = stored()
        end_session()
        assert path.is_file() and job.status in ("queued", "running")
    finally:
        if job is not None:
            job.stop()
            job.join(60)
            REGISTRY.forget(SESSION)
    upload_ledger.collect()
    assert not path.exists()


def test_an_upload_over_the_limits_keeps_its_first_rows_and_says_so(fresh, monkeypatch):
    monkeypatch.setattr(upload_ledger, "MAX_UPLOAD_ROWS", 40)
    at = data_page(("big.csv", ROWS))
    assert not at.exception
    [warning] = [w.value for w in at.warning]
    assert "only its first 40 rows are used" in warning and "big" in warning
    assert [m.value for m in at.metric][:3] == ["36", "2", "2"]
    [path] = stored()
    assert path.read_text(encoding="utf-8").count("\n") == 41  # the header and 40 rows
    at.run()  # the note stays while the upload is used
    assert [w.value for w in at.warning] == [warning] and not at.exception


@pytest.fixture
def upload_limit_1mb():
    limit = config.get_option("server.maxUploadSize")
    config.set_option("server.maxUploadSize", 1)
    yield
    config.set_option("server.maxUploadSize", limit)


def test_an_upload_above_the_server_limit_is_refused_with_a_message(fresh, upload_limit_1mb):
    at = data_page(("huge.csv", ROWS * 400))  # 1.4 MB: the uploader refuses it; a client that does not is told
    assert not at.exception
    assert any("above the limit of 1 MB" in e.value for e in at.error)
    assert stored() == []


def test_upload_corpora_are_cached_per_session_at_most_two(fresh, monkeypatch):
    tables = []
    for k in range(3):
        tables.append(fresh / f"t{k}.csv")
        tables[-1].write_text(ROWS.replace("cat", f"cat{k}"), encoding="utf-8")
    loads = []

    def counting(spec, **options):
        loads.append(spec)
        return corpora_load(spec, **options)

    corpora_load = data_ui.load_corpus
    monkeypatch.setattr(data_ui, "load_corpus", counting)

    def script(paths: list[str]) -> None:
        from attnviz_app.app_pages.shared.data_ui import cached_corpus

        for path in paths:
            cached_corpus(f"{path}?src=en&tgt=fr")

    specs = [str(t) for t in tables]
    at = AppTest.from_function(script, args=(specs + specs[:1],), default_timeout=60)
    at.run()
    assert not at.exception
    assert len(loads) == 4  # the first was dropped to keep two: loaded again
    caching.clear_session_data_cache(SESSION)  # the session disconnects: its corpora go
    at.run()
    assert len(loads) == 8


def test_uploads_of_servers_that_are_gone_are_deleted_at_start(fresh):
    root = upload_folder.UPLOAD_ROOT
    dead, live = root / "server-999999991", root / "server-999999992"
    for folder in (dead, live):
        folder.mkdir(parents=True)
        (folder / "a.csv").write_text(ROWS, encoding="utf-8")
    (root / "server-999999991.lock").touch()  # held by no one: its server was killed
    fd = files.hold_lock(root / "server-999999992.lock")  # another server, alive
    loose = root / "0123456789abcdef0123.csv"  # left by a version before the server folders
    loose.write_text(ROWS, encoding="utf-8")
    try:
        mine = upload_folder.server_folder()  # the first use in a server (boot.py) cleans up
        assert not dead.exists() and not loose.exists() and not (root / "server-999999991.lock").exists()
        assert (live / "a.csv").is_file() and mine.is_dir() and files.is_locked(mine.with_name(mine.name + ".lock"))
    finally:
        files.release_lock(root / "server-999999992.lock", fd)


@pytest.mark.parametrize(
    ("fmt", "data", "rows"),
    [
        ("csv", 'en,fr\n"two\nlines",x\n' + "a,b\n" * 5, ['"two\nlines",x', "a,b", "a,b"]),
        ("tsv", "en\tfr\n" + 'a\t"b\n' * 5, ['a\t"b', 'a\t"b', 'a\t"b']),
        ("jsonl", "".join(json.dumps({"en": f"a{i}", "fr": "b"}) + "\n" for i in range(5)), None),
    ],
)
def test_head_rows_keeps_whole_rows_and_the_header(fmt, data, rows):
    head, kept = table_head.head_rows(data.encode(), fmt, 3, 10**6)
    assert kept == 3
    text = head.decode()
    if rows:
        assert text == data.split("\n", 1)[0] + "\n" + "\n".join(rows) + "\n"
    else:
        assert [json.loads(line)["en"] for line in text.splitlines()] == ["a0", "a1", "a2"]
    assert table_head.head_rows(data.encode(), fmt, 100, 10**6) is None


def test_head_rows_bounds_bytes_and_parquet_and_json_arrays():
    import pyarrow as pa
    import pyarrow.parquet as pq

    long_rows = "en,fr\n" + "".join(f"{'word ' * 20}{i},x\n" for i in range(100))
    head, kept = table_head.head_rows(long_rows.encode(), "csv", 1000, 1000)
    assert 1 <= kept < 100 and len(head) <= 1000 and head.endswith(b"\n")
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table({"en": [f"a{i}" for i in range(10)], "fr": ["b"] * 10}), sink)
    head, kept = table_head.head_rows(sink.getvalue().to_pybytes(), "parquet", 4, 10**6)
    assert kept == 4 and pq.read_table(pa.BufferReader(head)).column("en").to_pylist() == ["a0", "a1", "a2", "a3"]
    array = json.dumps([{"en": f"a{i}", "fr": "b"} for i in range(10)]).encode()
    head, kept = table_head.head_rows(array, "json", 2, 10**6)
    assert kept == 2 and [r["en"] for r in json.loads(head)] == ["a0", "a1"]


@pytest.mark.usefixtures("fresh")
def test_the_data_page_offers_nested_fields_and_loads_their_pairs():
    text = "".join(json.dumps({"translation": {"de": d, "en": e}}) + "\n" for d, e in PAIRS)
    at = data_page(("pairs.jsonl", text))
    assert not at.exception and not at.error
    assert at.selectbox(key="data_src_col").options == ["translation.de", "translation.en"]
    assert at.selectbox(key="data_tgt_col").value == "translation.en"
    assert sum(int(m.value) for m in at.metric[:3]) == len(PAIRS)


def test_a_table_without_a_header_line_is_told_its_first_pair_named_the_columns():
    at = data_page(("pairs.csv", "the cat .,le chat .\nthe dog .,le chien .\n"))
    assert at.selectbox(key="data_src_col").value == "the cat ."
    assert any("is not read as one" in c.value for c in at.sidebar.caption)
    at = data_page(("pairs.csv", ROWS))
    assert not any("is not read as one" in c.value for c in at.sidebar.caption)
    assert "data_n" not in [box.key for box in at.number_input]  # pairs per split: for generated tasks only


MARKDOWN_NAME = "![t](http://127.0.0.1:9/c.png) **md**.csv"  # a beacon image and bold, if rendered


def shown_literally(message: str) -> bool:
    """``MARKDOWN_NAME`` is in ``message`` with every Markdown character backslash-escaped."""
    escaped = r"\!\[t\]\(http" + "\u2060" + r"\://127\.0\.0\.1\:9/c\.png\) \*\*md\*\*\.csv"  # no link: a word joiner
    return escaped in message and "![t](" not in message and "**md**" not in message


@pytest.mark.usefixtures("fresh")
def test_the_data_page_shows_an_uploaded_files_name_literally(monkeypatch):
    at = data_page((MARKDOWN_NAME, "en\nonly one column\n"))
    [error] = [e.value for e in at.error]
    assert "column" in error and shown_literally(error)  # it needs two columns

    monkeypatch.setattr(upload_ledger, "MAX_UPLOAD_ROWS", 40)
    send(at, MARKDOWN_NAME, ROWS)  # valid, and over the row limit: the note names it
    [warning] = [w.value for w in at.warning]
    assert "only its first 40 rows are used" in warning and shown_literally(warning)

    at.switch_page("attnviz_app/app_pages/learn.py").run()
    at.switch_page("attnviz_app/app_pages/data.py").run()  # the uploader is empty: the page says which upload it uses
    assert not at.exception
    assert any("uploaded earlier in this session" in c.value and shown_literally(c.value) for c in at.caption)


@pytest.mark.usefixtures("fresh")
def test_a_null_json_line_is_named_in_the_app_by_the_uploaded_files_name():
    lines = [json.dumps({"de": d, "en": e}) for d, e in PAIRS]
    at = data_page(("pairs.jsonl", "\n".join([*lines[:2], "null", *lines[2:]]) + "\n"))
    assert not at.exception
    [error] = [e.value for e in at.error]
    assert "pairs\\.jsonl, line 3\\: a record is null" in error  # the user's name, escaped
    assert str(upload_folder.server_folder()) not in error and "NoneType" not in error


@pytest.mark.usefixtures("fresh")
def test_a_note_about_an_upload_names_it_as_uploaded_and_no_gold_means_no_link_columns():
    at = data_page(("my pairs.csv", ROWS.rstrip("\n") + "\n,an empty source\n"))
    [note] = [c.value for c in at.caption if "dropped" in c.value]
    assert note == "ℹ️ my pairs\\.csv\\: dropped 1 row with an empty side \\(line 62\\)"  # the name, escaped
    table = at.dataframe[0].value
    assert "Sure links" not in table.columns and {"Source", "Target", "Source length"} <= set(table.columns)


@pytest.mark.usefixtures("fresh")
def test_an_upload_nested_too_deeply_gets_a_message_not_the_error_box():
    at = data_page(("deep.json", "[" * 100_000))
    assert not at.exception
    assert any(e.value.startswith("deep") and "nests arrays or objects too deeply" in e.value for e in at.error)
