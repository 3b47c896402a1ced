"""``attnviz replay``: a model's alignment history as a table, as JSON and as an HTML animation;
a model without one is a one-line error."""

from __future__ import annotations

import json

import pytest

from attnviz.store.checkpoint import save
from attnviz.training.config import TrainConfig
from attnviz.training.fit import fit
from tests.support.cli import run
from tests.support.tiny import tiny_translator


@pytest.fixture(scope="module")
def recorded(corpus, tmp_path_factory):
    translator = tiny_translator(corpus)
    fit(translator, corpus, TrainConfig(epochs=1, batch_size=8, patience=None))
    return save(translator, tmp_path_factory.mktemp("replay") / "recorded.safetensors")


@pytest.fixture(autouse=True)
def beside(request, monkeypatch):
    """The working directory holds the checkpoints (the CLI reads models from the model folders and it)."""
    recorded = request.getfixturevalue("recorded")
    monkeypatch.chdir(recorded.parent)


def test_replay_lists_the_points(capsys, recorded):
    code, out, _ = run(capsys, "replay", str(recorded))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].endswith("6 points, 5 probes") or "points" in lines[0]
    assert lines[1].strip().startswith("untrained") and "AER" in lines[2] and "loss" in lines[2]


def test_replay_json_and_html(capsys, recorded, tmp_path):
    code, out, _ = run(capsys, "replay", str(recorded), "--json")
    history = json.loads(out)[str(recorded)]
    assert code == 0 and history["points"][0]["kind"] == "start" and history["probes"][0]["weights"]
    weights = [w for probe in history["probes"] for point in probe["weights"] for row in point for w in row]
    assert all(w == round(w, 4) for w in weights)  # 4 decimals, written without float32's noise
    assert max(len(repr(w)) for w in weights) <= len("0.1234")
    page = tmp_path / "replay.html"
    code, out, _ = run(capsys, "replay", str(recorded), "--out", str(page), "--axis", "epochs")
    assert code == 0 and page.is_file() and f"{len(history['points'])} frames" in out
    assert "<title>attnviz:" in page.read_text(encoding="utf-8")
    code, _, err = run(capsys, "replay", str(recorded), "--json", "--out", str(tmp_path / "other.html"))
    assert code == 2 and "give one of them" in err and not (tmp_path / "other.html").exists()


def test_a_model_without_history_is_a_one_line_error(capsys, corpus, recorded):
    plain = tiny_translator(corpus)
    path = save(plain, recorded.parent / "plain.safetensors")
    code, _, err = run(capsys, "replay", str(path))
    assert code == 2 and err.count("\n") == 1 and "without an alignment history" in err


def test_the_animation_never_overwrites_or_lands_in_the_shipped_folder(capsys, recorded, tmp_path, monkeypatch):
    page = tmp_path / "kept.html"
    page.write_text("mine", encoding="utf-8")
    code, _, err = run(capsys, "replay", str(recorded), "--out", str(page))
    assert code == 2 and "already exists" in err and "--force" in err
    assert page.read_text(encoding="utf-8") == "mine"  # nothing saved is lost
    code, _, _ = run(capsys, "replay", str(recorded), "--out", str(page), "--force")
    assert code == 0 and "<title>attnviz:" in page.read_text(encoding="utf-8")
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    monkeypatch.setattr("attnviz.cli.options.pretrained_dir", lambda: shipped)
    code, _, err = run(capsys, "replay", str(recorded), "--out", str(shipped / "r.html"))
    assert code == 2 and "shipped models" in err and not list(shipped.iterdir())


def test_a_probe_out_of_range_is_a_usage_error(capsys, recorded, tmp_path):
    with pytest.raises(SystemExit) as done:
        run(capsys, "replay", str(recorded), "--probe", "-1")
    assert done.value.code == 2 and "out of range" in capsys.readouterr().err
    code, _, err = run(capsys, "replay", str(recorded), "--probe", "9999", "--out", str(tmp_path / "r.html"))
    assert code == 2 and "probe must be between 0 and" in err and not (tmp_path / "r.html").exists()


def test_a_checkpoint_outside_the_model_folders_is_refused_as_by_translate(capsys, recorded, tmp_path):
    elsewhere = tmp_path / "elsewhere.safetensors"
    elsewhere.write_bytes(recorded.read_bytes())
    code, _, err = run(capsys, "replay", str(elsewhere))
    assert code == 2 and "outside the model folders" in err
