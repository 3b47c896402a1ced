"""AppTest for the Your model page's attention file and JoeyNMT sources: an upload shows its attention;
a malformed file or a checkpoint that needs code gets one message and no traceback."""

from __future__ import annotations

import argparse
import io
import json

import torch
from streamlit.testing.v1 import AppTest

from attnviz.external import EXAMPLE_ATTENTION
from tests.support.joeynmt_files import write_joey_folder
from tests.support.paths import APP


def attention_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("attnviz_app/app_pages/yours/yours.py").run()
    at.segmented_control(key="yours_source").set_value("Attention file").run()
    assert not at.exception, at.exception
    return at


def test_an_attention_file_is_drawn_matrix_by_matrix():
    at = attention_page()
    at.file_uploader(key="yours_file_upload").set_value(
        ("mine.json", json.dumps(EXAMPLE_ATTENTION).encode(), "application/json")
    ).run()
    assert not at.exception and not at.error
    assert at.multiselect(key="yours_file_matrix").options == ["layer 0 head 0", "layer 0 head 1"]
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


def joey_page(tmp_path) -> tuple[AppTest, dict[str, bytes]]:
    folder = write_joey_folder(tmp_path / "my_rnn")
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("attnviz_app/app_pages/yours/yours.py").run()
    at.segmented_control(key="yours_source").set_value("JoeyNMT checkpoint").run()
    at.radio(key="yours_joey_kind").set_value("Its files one by one").run()
    assert not at.exception, at.exception
    return at, {p.name: p.read_bytes() for p in folder.iterdir()}


def upload_joey(at: AppTest, files: dict[str, bytes]) -> None:
    """The JoeyNMT source's four uploads (config, checkpoint, both vocabularies), then a run."""
    for key, name in (
        ("config", "config.yaml"),
        ("ckpt", "best.ckpt"),
        ("src", "src_vocab.txt"),
        ("trg", "trg_vocab.txt"),
    ):
        at.file_uploader(key=f"yours_joey_{key}").set_value((name, files[name], "application/octet-stream"))
    at.run()


def test_a_joeynmt_checkpoint_converts_and_shows_its_attention(tmp_path):
    at, files = joey_page(tmp_path)
    upload_joey(at, files)
    assert not at.exception and not at.error
    assert at.download_button(key="yours_joey_download")
    at.text_input(key="yours_joey_text").set_value("a b c").run()
    assert not at.exception and not at.error
    layout = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]
    assert layout["xaxis"]["ticktext"][:3] == ["a", "b", "c"]  # the typed sentence, as the model read it
    at.text_input(key="yours_joey_reference").set_value("y x").run()
    at.number_input(key="yours_joey_beam").set_value(2).run()
    assert not at.exception and not at.error
    options = at.multiselect(key="yours_joey_matrix").options
    assert options[:2] == ["reference (forced)", "beam 2"]
    at.multiselect(key="yours_joey_matrix").set_value(["reference (forced)"]).run()
    layout = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]
    assert layout["yaxis"]["ticktext"] == ["y", "x", "&lt;eos&gt;"]  # the reference, HTML-escaped


def test_a_joeynmt_checkpoint_that_needs_code_gets_one_message(tmp_path):
    at, files = joey_page(tmp_path)
    state = torch.load(io.BytesIO(files["best.ckpt"]), weights_only=True)
    state["args"] = argparse.Namespace(lr=0.1)
    evil = io.BytesIO()
    torch.save(state, evil)
    files["best.ckpt"] = evil.getvalue()
    upload_joey(at, files)
    assert not at.exception
    assert len(at.error) == 1 and "argparse" in at.error[0].value and "run code" in at.error[0].value
