"""Explore's Alignment view, adapted (AppTest, a tiny toy-fr model): a copy fine-tuned on an uploaded
bitext in the background adds its row to the scores and its maps behind a toggle, the model files
untouched; Cancel drops it; Save writes a new file; a bitext it cannot use gets one message."""

from __future__ import annotations

import hashlib
import json
import shutil
import threading

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from attnviz.server import adapt_jobs
from tests.support.app import TEXT, start

BITEXT = b"the girl sees the cat . ||| la fille voit le chat .\nthe cat eats . ||| le chat mange .\n"
HELD = "explore_adapt_held"


@pytest.fixture
def adapt_env(app_models_dir, monkeypatch, tmp_path):
    """A models folder of its own (a save must not reach the shared one) holding one tiny toy-fr model."""
    folder = tmp_path / "models"
    folder.mkdir()
    shutil.copy(app_models_dir / "toyfr-general-luong.safetensors", folder)
    monkeypatch.setenv("ATTNVIZ_MODELS", str(folder))
    monkeypatch.setenv("ATTNVIZ_PRETRAINED", str(tmp_path / "no-pretrained"))
    st.cache_data.clear()
    return folder


def files_of(folder) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.glob("*.safetensors")}


def corpus_rows(at: AppTest) -> list[str]:
    return list(at.dataframe[0].value["aligner"])  # the corpus scores (the per-sentence table is closed)


def gold_titles(at: AppTest) -> list[str]:
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    return [(s["layout"].get("title") or {}).get("text", "") for s in specs]


def upload(at: AppTest, data: bytes = BITEXT, name: str = "pairs.txt", steps: int = 4) -> AppTest:
    at.radio(key="explore_adapt_on").set_value("upload").run()
    at.file_uploader(key="explore_adapt_file").set_value((name, data, "text/plain"))
    at.number_input(key="explore_adapt_steps").set_value(steps)
    return at.run()


def wait_for_job(at: AppTest) -> AppTest:
    """AppTest never fires the progress fragment's timer: wait for the thread, then rerun as the timer would."""
    at.session_state[HELD].job.join(120)
    return at.run()


def test_an_adapted_copy_adds_its_row_and_maps_and_leaves_the_model_files_alone(adapt_env):
    before = files_of(adapt_env)
    at = start(explore_text=TEXT, explore_view="Alignment", explore_align_part="gold")
    assert not at.exception, at.exception
    assert corpus_rows(at) == ["attention (argmax)", "eflomal"]
    at = upload(at)
    assert not at.exception and not at.error, (at.exception, at.error)
    at.button(key="explore_adapt_start").click().run()
    assert not at.exception, at.exception
    at = wait_for_job(at)
    assert not at.exception and not at.error, (at.exception, at.error)
    assert any(m.value.startswith("Adapted a copy of toyfr") for m in at.success)
    assert corpus_rows(at) == ["attention (argmax)", "adapted 4 steps: attention (argmax)", "eflomal"]
    assert at.segmented_control(key="explore_adapt_maps").value == "adapted"
    assert any("adapted 4 steps: attention (argmax)" in t for t in gold_titles(at))
    at.segmented_control(key="explore_adapt_maps").set_value("plain").run()
    assert not any("adapted" in t for t in gold_titles(at))
    assert files_of(adapt_env) == before  # nothing written: the copy lives in the session
    at.text_input(key="explore_adapt_name").set_value("toy fr adapted")
    at.button(key="explore_adapt_save").click().run()
    assert not at.exception and not at.error, (at.exception, at.error)
    after = files_of(adapt_env)
    assert {k: v for k, v in after.items() if k in before} == before
    assert set(after) - set(before) == {"toy-fr-adapted.safetensors"}
    assert any("Saved as toy-fr-adapted.safetensors" in m.value.replace("\\", "") for m in at.success)


def test_cancel_drops_the_copy(adapt_env, monkeypatch):
    started = threading.Event()

    def endless(translator, sources, targets, cfg, callback, should_stop):  # runs until cancelled
        started.set()
        while not should_stop():
            started.wait(0.01)
        return translator

    monkeypatch.setattr(adapt_jobs, "adapt", endless)
    at = upload(start(explore_text=TEXT, explore_view="Alignment", explore_align_part="gold"), steps=2000)
    at.button(key="explore_adapt_start").click().run()
    assert started.wait(60) and at.progress, "the job did not start"
    assert at.progress[0].proto.text.startswith("Adapting")
    at.button(key="explore_adapt_cancel").click().run()
    at = wait_for_job(at)
    assert not at.exception, at.exception
    assert any("cancelled" in w.value for w in at.warning)
    assert corpus_rows(at) == ["attention (argmax)", "eflomal"]
    assert "explore_adapt_maps" not in [s.key for s in at.segmented_control]


@pytest.mark.parametrize(
    ("data", "name", "message"),
    [
        (b"", "empty.txt", "empty.txt is empty: it holds no sentences"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "cat.png", "cat.png looks like a binary file"),
        (b"the cat . ||| le chat .\nthe girl .\n", "half.txt", "half.txt line 2: no ' ||| ' separator"),
    ],
)
def test_a_bitext_it_cannot_adapt_on_gets_one_message(adapt_env, data, name, message):
    at = upload(start(explore_text=TEXT, explore_view="Alignment", explore_align_part="gold"), data, name)
    assert not at.exception, at.exception
    assert len(at.error) == 1 and message in at.error[0].value.replace("\\", "")
    assert at.button(key="explore_adapt_start").disabled


def test_two_sentence_files_of_different_lengths_get_one_message(adapt_env):
    at = upload(start(explore_text=TEXT, explore_view="Alignment", explore_align_part="gold"), b"a\nb\n", "src.txt")
    at.file_uploader(key="explore_adapt_tgt_file").set_value(("tgt.txt", b"a\n", "text/plain")).run()
    assert not at.exception, at.exception
    assert len(at.error) == 1 and "src.txt has 2 lines but tgt.txt has 1" in at.error[0].value.replace("\\", "")


def test_a_file_over_the_limit_gets_one_message(adapt_env, monkeypatch):
    monkeypatch.setattr(adapt_jobs, "MAX_FILE_BYTES", 2**20)  # a 1 GB upload stops at the server's limit first
    at = upload(start(explore_text=TEXT, explore_view="Alignment", explore_align_part="gold"), BITEXT * 2**15)
    assert not at.exception, at.exception
    assert len(at.error) == 1 and "over the 1 MB limit" in at.error[0].value


def test_the_panel_names_the_file_it_adapts_on_and_the_upload_limit(adapt_env):
    """The uploader refuses a file over the limit in the browser (a red mark only), leaving the file before
    it in use: the panel says the limit before an upload, and which file and how many pairs it adapts on
    after one. (It said only 'Upload a bitext...' beside a refused file, and adapted on the earlier one.)"""
    at = start(explore_text=TEXT, explore_view="Alignment", explore_align_part="gold")
    at.radio(key="explore_adapt_on").set_value("upload").run()
    assert any("at most 50 MB each" in i.value for i in at.info)
    at = upload(at, "le chat ||| the cat\nun chien ||| a dog\n".encode("utf-16"), "unicode.txt")
    assert not at.exception and not at.error, (at.exception, at.error)  # UTF-16 with its mark is text
    assert any(c.value.replace("\\", "") == "Adapts on unicode.txt: 2 pairs." for c in at.caption)


def test_the_panels_choices_outlive_a_visit_to_another_page(adapt_env):
    at = upload(start(explore_text=TEXT, explore_view="Alignment", explore_align_part="gold"), steps=37)
    at.checkbox(key="explore_adapt_guided").check().run()
    at.switch_page("attnviz_app/app_pages/learn.py").run()
    at.switch_page("attnviz_app/app_pages/explore/explore.py").run()
    assert not at.exception, at.exception
    assert at.radio(key="explore_adapt_on").value == "upload"
    assert at.number_input(key="explore_adapt_steps").value == 37
    assert at.checkbox(key="explore_adapt_guided").value
