"""``attnviz align-eval --drift``: a gold file whose links sit one word off the model's from the second
target word on is reported as offset +1 from word 1, in text and in JSON; the model's own links as no drift."""

from __future__ import annotations

import json

import pytest

from attnviz.data import to_pharaoh
from attnviz.links.extract import align_corpus
from attnviz.store.checkpoint import save
from tests.support.cli import run

SOURCES = [["a", "b", "c", "d", "e"], ["f", "g", "h", "a", "b", "c"], ["d", "e", "f", "g"]]


@pytest.fixture
def drifted(trained, tmp_path, monkeypatch):
    """A bitext, a gold file of the model's own links and one shifted a word back from target word 1 on
    (so the model's links sit one word *after* the gold's from there), and the model's links."""
    model = save(trained, tmp_path / "models" / "rev.safetensors")
    monkeypatch.setenv("ATTNVIZ_MODELS", str(model.parent))
    monkeypatch.chdir(tmp_path)
    targets = [list(reversed(s)) for s in SOURCES]
    (tmp_path / "text.a-b").write_text(
        "".join(f"{' '.join(s)} ||| {' '.join(t)}\n" for s, t in zip(SOURCES, targets, strict=True)), encoding="utf-8"
    )
    own = align_corpus(trained, SOURCES, targets).links
    shifted = [sorted((i - 1, j) if j >= 1 else (i, j) for i, j in links if j < 1 or i >= 1) for links in own]
    (tmp_path / "own.txt").write_text("".join(to_pharaoh(x) + "\n" for x in own), encoding="utf-8")
    (tmp_path / "shifted.txt").write_text("".join(to_pharaoh(x) + "\n" for x in shifted), encoding="utf-8")
    return str(model), own


def _moved(links) -> int:
    """The model's links that the shifted gold moved (and kept): the gain of the drift."""
    return sum(j >= 1 and i >= 1 for i, j in links)


def test_a_drifted_gold_is_reported_with_its_offset_start_and_histogram(capsys, drifted):
    model, own = drifted
    assert all(_moved(links) >= 2 for links in own)  # every pair holds a drift of two links or more
    base = ["align-eval", "--model", model, "--bitext", "text.a-b", "--gold", "shifted.txt", "--base", "0"]
    code, out, _ = run(capsys, *base, "--drift", "--per-sentence")
    assert code == 0
    drift = next(line for line in out.splitlines() if line.strip().startswith("drift:"))
    assert "the source index against the gold's sure links, offsets -3..+3" in drift
    assert "offset +1 in 3 of 3 sentences (100%), from target word 1 on" in drift
    assert "offsets: -3: 0  -2: 0  -1: 0  0: 0  +1: 3  +2: 0  +3: 0" in out
    assert out.count("drift +1 from target word 1") == 3  # each sentence's line

    code, out, _ = run(capsys, *base, "--drift", "--per-sentence", "--json")
    data = json.loads(out)
    assert code == 0 and data["drift"]["dominant"] == 1 and data["drift"]["share"] == 1.0
    assert data["drift"]["histogram"] == {"-3": 0, "-2": 0, "-1": 0, "0": 0, "+1": 3, "+2": 0, "+3": 0}
    assert (data["drift"]["start"], data["drift"]["side"], data["drift"]["positions"]) == (1, "source", "target")
    assert [s["drift"]["gain"] for s in data["sentences"]] == [_moved(links) for links in own]


def test_the_model_s_own_links_do_not_drift_and_without_the_flag_nothing_is_reported(capsys, drifted):
    model, _ = drifted
    base = ["align-eval", "--model", model, "--bitext", "text.a-b", "--gold", "own.txt", "--base", "0"]
    code, out, _ = run(capsys, *base, "--drift")
    assert code == 0 and "offset 0 in 3 of 3 sentences (100%); no sentence drifts" in out
    code, out, _ = run(capsys, *base, "--json")
    assert code == 0 and "drift" not in json.loads(out)
    code, out, _ = run(capsys, *base, "--drift", "--drift-side", "target", "--json")
    assert code == 0 and json.loads(out)["drift"]["positions"] == "source"
