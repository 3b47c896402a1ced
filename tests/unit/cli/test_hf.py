"""``attnviz hf``: a tiny Marian folder's links per head, scored against gold; heads ranked on a gold
file; bad input is exit 2 and one line."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import run
from tests.support.hf_models import GOLD, REFERENCE, SENTENCES, SOURCE, marian_folder


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return marian_folder(tmp_path_factory.mktemp("marian") / "opus-mt-tiny")


def test_one_head_links_scored_against_gold(capsys, folder):
    code, out, err = run(capsys, "hf", str(folder), SOURCE, "--reference", REFERENCE, "--layer", "1", "--head", "2",
                         "--method", "dtw", "--gold-links", GOLD)  # fmt: skip
    assert code == 0, err
    assert f"reference: {REFERENCE}" in out and "attention: layer 1, head 2 (marian, 3 layers x 4 heads)" in out
    assert "links (dtw" in out and "the  ->  le" in out and "AER" in out
    assert err == ""  # transformers' progress bars and warnings stay quiet


def test_json_translation_with_the_n_best(capsys, folder):
    code, out, _ = run(capsys, "hf", str(folder), SOURCE, "--beam", "3", "--max-new-tokens", "4", "--heads", "0:1 2:3",
                       "--json")  # fmt: skip
    assert code == 0
    result = json.loads(out)
    assert result["attention"] == "heads 0:1 2:3" and len(result["n_best"]) == 3
    assert result["source_words"] == SOURCE.split()
    assert all(0 <= s < len(result["source_words"]) for s, _ in result["links"])


def test_every_head_ranked_on_a_gold_file(capsys, folder, tmp_path):
    src, tgt, gold = tmp_path / "src.txt", tmp_path / "tgt.txt", tmp_path / "gold.txt"
    src.write_text(f"{SENTENCES[0]}\n{SENTENCES[2]}\n", encoding="utf-8")
    tgt.write_text(f"{SENTENCES[1]}\n{SENTENCES[3]}\n", encoding="utf-8")
    gold.write_text(f"{GOLD}\n0-0 1-1 2-2 3-4 4-5 5-3 6-6 7-7 8-8\n", encoding="utf-8")
    code, out, err = run(capsys, "hf", str(folder), "--src", str(src), "--tgt", str(tgt), "--gold", str(gold),
                         "--json")  # fmt: skip
    assert code == 0, err
    rows = json.loads(out)["rows"]
    assert len(rows) == 1 + 3 + 3 * 4  # the average, each layer, each head
    read = json.loads(out)["gold"]  # how the gold was read, as align-eval reports it
    assert (read["file"], read["format"], read["base"], read["null_links"]) == (str(gold), "pharaoh", 0, 0)
    assert [r["AER"] for r in rows] == sorted(r["AER"] for r in rows)
    code, out, _ = run(capsys, "hf", str(folder), "--src", str(src), "--tgt", str(tgt), "--gold", str(gold),
                       "--top", "3")  # fmt: skip
    assert code == 0 and "2 pairs, links by argmax" in out and len(out.strip().splitlines()) == 3 + 3
    assert out.splitlines()[0].startswith(f"gold: {gold}: pharaoh or talp (")  # as align-eval says how it read it


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{folder}/missing", "x"], "is not a folder"),
        (["{folder}", "x", "--head", "1"], "--head needs --layer"),
        (["{folder}", "x", "--layer", "9"], "out of range"),
        (["{folder}", "x", "--heads", "1-2"], "not a layer:head pair"),
        (["{folder}", "x", "--gold-links", "0-0"], "--reference"),
        (["{folder}"], "give a source sentence"),
        (["{folder}", "x", "--src", "a.txt"], "--src, --tgt and --gold together"),
    ],
)
def test_bad_input_is_exit_2_and_one_line(capsys, folder, args, message):
    code, _, err = run(capsys, "hf", *[a.format(folder=folder) for a in args])
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
