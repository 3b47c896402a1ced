"""Your own checkpoint from the browser: uploaded in Explore's sidebar, checked as the CLI checks it,
opened at once, offered by every page of its session and by no other session, saved into the models
folder on request (never overwriting), freed when the session ends. Models trained on an upload are
private to their session until it shares them.

Another session is simulated by giving the page helpers another session id (AppTest runs every
script as "test session id"); tests/browser/test_checkpoint_upload.py opens two real browser contexts."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import streamlit as st
from streamlit.runtime import caching
from streamlit.testing.v1 import AppTest

from attnviz.server import checkpoints, upload_folder, upload_ledger, web_sessions
from attnviz.store import catalog
from attnviz.training.recipes import Recipe, run_recipe
from attnviz_app.app_pages.explore import sidebar
from attnviz_app.app_pages.shared import checkpoint_upload, common
from tests.support.jobs import tiny_recipe
from tests.support.paths import APP
from tests.support.uploads import use_fresh_uploads

SESSION = "test session id"  # AppTest's session id
UPLOADER = "ckpt_upload_0"  # the first uploader of a session


@pytest.fixture
def fresh(app_models_dir, tmp_path, monkeypatch) -> Path:
    """A models folder with the tiny app models; uploads, their ledger and the uploaded checkpoints
    in a temporary folder; sessions end as soon as they disconnect."""
    folder = tmp_path / "models"
    shutil.copytree(app_models_dir, folder)
    monkeypatch.setenv("ATTNVIZ_MODELS", str(folder))
    monkeypatch.setenv("ATTNVIZ_PRETRAINED", str(tmp_path / "no-pretrained"))
    use_fresh_uploads(tmp_path / "uploads", monkeypatch, checkpoint_uploads=True)
    monkeypatch.setattr(web_sessions, "reconnect_window", lambda: 0.0)
    st.cache_data.clear()
    caching.clear_session_resource_cache(SESSION)
    yield folder
    caching.clear_session_resource_cache(SESSION)
    upload_folder.server_folder.cache_clear()


def explore() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception, at.exception
    return at


def upload(at: AppTest, name: str, data: bytes, key: str = UPLOADER) -> AppTest:
    at.file_uploader(key=key).set_value((name, data, "application/octet-stream")).run()
    assert not at.exception, at.exception
    return at


def test_an_uploaded_checkpoint_opens_in_explore_and_every_page_of_its_session(fresh):
    at = upload(explore(), "mine.safetensors", (fresh / "toyfr-additive-bahdanau.safetensors").read_bytes())
    assert [s.value for s in at.success] == ["Opened mine \\(additive/Bahdanau, task toy\\-fr\\)."]
    [entry] = checkpoints.session_checkpoints(SESSION)
    assert at.selectbox(key=f"{sidebar.CKPT_KEY}_bahdanau").value == entry.path  # the view uses it
    assert (at.selectbox(key=sidebar.SCORE_KEY).value, at.session_state[sidebar.STYLE_KEY]) == ("additive", "bahdanau")
    assert any(" · mine:" in m.value for m in at.markdown)  # its translation line names it
    assert at.file_uploader(key="ckpt_upload_1") is not None  # a fresh uploader for the next file
    for page, key in (
        ("attnviz_app/app_pages/compare.py", "cmp_models"),
        ("attnviz_app/app_pages/evaluate.py", "eval_models"),
    ):
        at.switch_page(page).run()
        assert not at.exception, at.exception
        assert "mine" in [o.split(" · ")[0] for o in at.multiselect(key=key).options], page
    at.switch_page("attnviz_app/app_pages/compare.py").run()
    at.multiselect(key="cmp_models").set_value(["mine", "toyfr-general-luong"]).run()
    assert not at.exception and at.get("plotly_chart"), at.exception
    at.switch_page("attnviz_app/app_pages/learn.py").run()
    at.selectbox(key="learn_model").set_value("mine").run()
    assert not at.exception, at.exception
    at.switch_page("attnviz_app/app_pages/evaluate.py").run()
    at.multiselect(key="eval_models").set_value(["mine"])
    at.number_input(key="eval_n").set_value(10)
    at.button(key="eval_go").click().run()
    assert not at.exception, at.exception
    assert not at.warning, [w.value for w in at.warning]  # measured, no error
    assert "mine" in [row["model"] for row in at.session_state["eval_rows"]]


def test_another_session_neither_lists_nor_loads_the_upload(fresh, monkeypatch):
    upload(explore(), "mine.safetensors", (fresh / "toyfr-additive-bahdanau.safetensors").read_bytes())
    [entry] = checkpoints.session_checkpoints(SESSION)
    monkeypatch.setattr(common, "session_id", lambda: "another session")
    other = explore()
    assert "mine" not in [m.name for m in common.session_models()]
    other.selectbox(key=sidebar.SCORE_KEY).set_value("additive").run()
    assert not other.exception, other.exception
    assert all(entry.path not in box.options for box in other.selectbox)  # no checkpoint picker offers it
    assert not any(" · mine:" in m.value for m in other.markdown)
    other.switch_page("attnviz_app/app_pages/compare.py").run()
    assert "mine" not in [o.split(" · ")[0] for o in other.multiselect(key="cmp_models").options]
    with pytest.raises(Exception, match="not this session's"):  # a path learnt some other way loads nothing
        common.load_model(entry.path, Path(entry.path).stat().st_mtime)


@pytest.mark.parametrize(
    ("name", "data", "said"),
    [
        ("notes.safetensors", b"not a checkpoint", "notes.safetensors"),
        ("model.pt", b"\x80\x04pickled", "pickle"),
    ],
)
def test_a_bad_file_gets_one_message_and_nothing_changes(fresh, name, data, said):
    before = sorted(p.name for p in fresh.iterdir())
    at = upload(explore(), name, data)
    [error] = at.error  # beside the uploader, and as a toast: the panel may sit below the sidebar's fold
    assert error.value.startswith("Not opened:") and said in error.value.replace("\\", "")
    assert [t.value for t in at.toast] == [error.value]
    assert checkpoints.session_checkpoints(SESSION) == []
    assert sorted(p.name for p in fresh.iterdir()) == before
    upload(at, "mine.safetensors", (fresh / "toyfr-general-luong.safetensors").read_bytes(), key="ckpt_upload_1")
    assert len(checkpoints.session_checkpoints(SESSION)) == 1  # the next file works


def test_save_puts_it_in_the_models_folder_for_everyone_and_removal_or_the_end_frees_it(fresh):
    data = (fresh / "toyfr-additive-bahdanau.safetensors").read_bytes()
    at = upload(explore(), "toyfr-general-luong.safetensors", data)
    [entry] = checkpoints.session_checkpoints(SESSION)
    assert entry.name == "toyfr-general-luong-uploaded"  # the folder has that name
    assert any("renamed" in s.value for s in at.success), [s.value for s in at.success]
    at.text_input(key="ckpt_save_name_0").set_value("toyfr-general-luong")
    at.button(key="ckpt_save_0").click().run()
    assert not at.exception, at.exception
    assert (fresh / "toyfr-general-luong-2.safetensors").read_bytes() == data  # a free name; nothing overwritten
    assert checkpoints.session_checkpoints(SESSION) == [] and not Path(entry.path).exists()
    assert "toyfr-general-luong-2" in [m.name for m in catalog.list_models(viewer="another session")]
    assert at.selectbox(key=f"{sidebar.CKPT_KEY}_bahdanau").value == str(fresh / "toyfr-general-luong-2.safetensors")

    at = upload(at, "again.safetensors", data, key="ckpt_upload_1")
    [entry] = checkpoints.session_checkpoints(SESSION)
    at.button(key="ckpt_remove_0").click().run()
    assert not at.exception and not Path(entry.path).exists()

    at = upload(at, "last.safetensors", data, key="ckpt_upload_2")
    [entry] = checkpoints.session_checkpoints(SESSION)
    caching.clear_session_resource_cache(SESSION)  # what a disconnect does (AppSession.clear_session_caches)
    upload_ledger.collect()  # the janitor's round after the reconnect window
    assert not Path(entry.path).exists() and checkpoints.UPLOADS._models == {}


@pytest.fixture
def upload_trained(fresh, tmp_path):
    """``private``: a model this session (AppTest's id) trained on its upload."""
    data = tmp_path / "upload.tsv"
    data.write_text("en\tde\n" + "".join(f"quux {i} row\tgeheim {i}\n" for i in range(60)), encoding="utf-8")
    recipe = Recipe(**{**tiny_recipe("private", epochs=1).to_dict(), "data": f"{data}?src=en&tgt=de"})
    run_recipe(recipe, fresh / "private.safetensors", meta={"owner": SESSION})
    return fresh / "private.safetensors"


def test_a_model_trained_on_an_upload_is_private_until_its_owner_shares_it(upload_trained, monkeypatch):
    at = explore()
    assert not at.exception
    assert "private" not in [m.name for m in catalog.list_models(viewer="another session")]
    at.button(key="ckpt_share_0").click().run()
    assert not at.exception, at.exception
    assert any("Shared private" in s.value for s in at.success)
    assert "private" in [m.name for m in catalog.list_models(viewer="another session")]
    monkeypatch.setattr(common, "session_id", lambda: "another session")
    assert "private" in [m.name for m in common.session_models()]


def test_an_upload_the_server_cannot_store_says_so_without_its_paths(fresh, monkeypatch):
    def full_disk(self, data):
        raise OSError(28, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_bytes", full_disk)
    at = upload(explore(), "mine.safetensors", (fresh / "toyfr-general-luong.safetensors").read_bytes())
    [error] = at.error
    said = error.value.replace("\\", "")
    assert said.startswith("Not opened: mine.safetensors: the server could not store the upload (No space left")
    assert "/" not in said  # no server path
    assert [t.value for t in at.toast] == [error.value]


def test_at_the_most_uploads_a_tab_may_hold_the_upload_box_gives_way_to_a_note(fresh, monkeypatch):
    for module in (checkpoints, checkpoint_upload):
        monkeypatch.setattr(module, "MAX_CHECKPOINTS_PER_SESSION", 1)
    at = upload(explore(), "mine.safetensors", (fresh / "toyfr-additive-bahdanau.safetensors").read_bytes())
    assert not at.get("file_uploader")  # an upload there would only be refused
    assert any(c.value.startswith("1 checkpoints uploaded, the most a tab may hold") for c in at.sidebar.caption)
