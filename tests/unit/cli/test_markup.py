"""``attnviz markup``: the marked-up translation and the span mapping, as text and JSON, by method; bad markup
and bad options exit 2 with one line."""

from __future__ import annotations

import dataclasses
import json

import pytest

from attnviz.links import translate_markup
from attnviz.store.checkpoint import save
from tests.support.cli import run

TOY_DATA = {"data": "toy-fr", "data_options": {"n_train": 30, "n_valid": 2, "n_test": 2, "seed": 0}}


@pytest.fixture
def cli_model(trained, tmp_path, monkeypatch):
    path = save(trained, tmp_path / "models" / "rev.safetensors")
    monkeypatch.setenv("ATTNVIZ_MODELS", str(path.parent))
    monkeypatch.chdir(tmp_path)
    return str(path)


def test_markup_prints_the_marked_translation_and_where_each_element_went(capsys, cli_model):
    code, out, err = run(capsys, "markup", "--model", cli_model, "--target", "d c b a", "a <b>b c</b> d {x}")
    expected = translate_markup(__import__("attnviz").load(cli_model), "a <b>b c</b> d {x}", target="d c b a")
    lines = out.splitlines()
    assert code == 0 and not err and lines[0] == expected.marked_translation
    assert lines[1] == "links: argmax; split rule: hull"
    assert lines[2].split() == ["element", "source", "words", "target", "words", "flags"]
    assert lines[3].startswith("<b>") and "1-2 b c" in lines[3]
    assert lines[4].startswith("{x}") and "at the end" in lines[4]


def test_markup_json_is_the_libraries_result(capsys, cli_model, trained):
    args = ["markup", "--model", cli_model, "--method", "grow-diag-final", "--reverse-model", cli_model]
    code, out, _ = run(capsys, *args, "--split", "block", "--json", "a <i>b</i> c")
    data = json.loads(out)
    expected = translate_markup(trained, "a <i>b</i> c", "grow-diag-final", trained, split="block")
    assert code == 0 and data == json.loads(json.dumps(expected.to_dict()))
    assert data["spans"][0]["element"] == "<i>" and data["split"] == "block"


def test_markup_with_eflomal_learns_from_the_models_data(capsys, trained, tmp_path, monkeypatch):
    pytest.importorskip("eflomal", reason="eflomal is not installed (pip install eflomal==2.0.0)")
    path = save(dataclasses.replace(trained, meta={"recipe_full": TOY_DATA}), tmp_path / "toy.safetensors")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "markup", "--model", str(path), "--method", "eflomal", "--json", "a <b>b</b> c")
    data = json.loads(out)
    assert code == 0 and data["method"] == "eflomal" and data["spans"][0]["element"] == "<b>"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["<script>alert(1)</script> a"], "<script>"),
        (["<b>a"], "never closed"),
        (["a <b>" + "b " * 3000 + "</b>"], "characters long"),
        (["--method", "union", "a <b>b</b>"], "reverse model"),
        (["--reverse-model", "rev.safetensors", "a <b>b</b>"], "--reverse-model is used by"),
        (["--layer", "1", "a <b>b</b>"], "Hugging Face"),
        (["--target", " ", "a <b>b</b>"], "translation given is empty"),
    ],
)
def test_markup_bad_input_exits_2_with_one_line(capsys, cli_model, args, says):
    code, out, err = run(capsys, "markup", "--model", cli_model, *args)
    assert code == 2 and not out and says in err and len(err.strip().splitlines()) == 1
