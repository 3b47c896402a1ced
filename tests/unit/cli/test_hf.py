"""``attnviz hf``: a tiny Marian folder's links per head, scored against gold; heads ranked on a gold
file; bad input is exit 2 and one line."""

from __future__ import annotations

import json
import shlex

import pytest

from tests.support.cli import run
from tests.support.hf_models import GOLD, REFERENCE, SENTENCES, SOURCE, marian_folder


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return marian_folder(tmp_path_factory.mktemp("marian") / "opus-mt-tiny")


def test_one_head_links_scored_against_gold(capsys, folder):
    one_head = shlex.split("--layer 1 --head 2 --method dtw")
    code, out, err = run(capsys, "hf", str(folder), SOURCE, "--reference", REFERENCE, *one_head, "--gold-links", GOLD)
    assert code == 0, err
    assert f"reference: {REFERENCE}" in out and "attention: layer 1, head 2 (marian, 3 layers x 4 heads)" in out
    assert "links (dtw" in out and "the  ->  le" in out and "AER" in out
    assert err == ""  # transformers' progress bars and warnings stay quiet


def test_json_translation_with_the_n_best(capsys, folder):
    n_best = shlex.split("--beam 3 --max-new-tokens 4 --heads '0:1 2:3' --json")
    code, out, _ = run(capsys, "hf", str(folder), SOURCE, *n_best)
    assert code == 0
    result = json.loads(out)
    assert result["attention"] == "heads 0:1 2:3" and len(result["n_best"]) == 3
    assert (result["model"], result["model_type"]) == (str(folder), "marian")  # the folder given, and its kind
    assert result["source_words"] == SOURCE.split()
    assert all(0 <= s < len(result["source_words"]) for s, _ in result["links"])


def test_every_head_ranked_on_a_gold_file(capsys, folder, tmp_path):
    src, tgt, gold = tmp_path / "src.txt", tmp_path / "tgt.txt", tmp_path / "gold-é.txt"
    src.write_text(f"{SENTENCES[0]}\n{SENTENCES[2]}\n", encoding="utf-8")
    tgt.write_text(f"{SENTENCES[1]}\n{SENTENCES[3]}\n", encoding="utf-8")
    gold.write_text(f"{GOLD}\n0-0 1-1 2-2 3-4 4-5 5-3 6-6 7-7 8-8\n", encoding="utf-8")
    files = ["--src", str(src), "--tgt", str(tgt), "--gold", str(gold)]
    code, out, err = run(capsys, "hf", str(folder), *files, "--json")
    assert code == 0, err
    rows = json.loads(out)["rows"]
    assert len(rows) == 1 + 3 + 3 * 4  # the average, each layer, each head
    read = json.loads(out)["gold"]  # how the gold was read, as align-eval reports it
    assert (read["file"], read["format"], read["base"], read["null_links"]) == (str(gold), "pharaoh", 0, 0)
    assert [r["aer"] for r in rows] == sorted(r["aer"] for r in rows)  # align-eval's keys
    assert set(rows[0]) == {"attention", "layer", "head", "precision", "recall", "f1", "aer", "predicted"}
    assert json.loads(out)["model"] == str(folder) and "gold-é.txt" in out  # non-ASCII as is, as everywhere
    code, out, _ = run(capsys, "hf", str(folder), *files, "--top", "3")
    assert code == 0 and "2 pairs, links by argmax" in out and len(out.strip().splitlines()) == 3 + 3
    assert out.splitlines()[0].startswith(f"gold: {gold}: pharaoh or talp (")  # as align-eval says how it read it


def _bitext(tmp_path):
    bitext, gold = tmp_path / "pairs.txt", tmp_path / "gold.txt"
    bitext.write_text("".join(f"{SENTENCES[k]} ||| {SENTENCES[k + 1]}\n" for k in (0, 2)), encoding="utf-8")
    gold.write_text(f"{GOLD}\n0-0 1-1 2-2 3-4 4-5 5-3 6-6 7-7 8-8\n", encoding="utf-8")
    return bitext, gold


def test_every_head_ranked_against_silver_and_gold(capsys, folder, tmp_path):
    bitext, gold = _bitext(tmp_path)
    code, out, err = run(
        capsys,
        "hf",
        str(folder),
        "--rank-heads",
        "--silver",
        "eflomal",
        "--pairs",
        str(bitext),
        "--gold",
        str(gold),
        "--json",
    )
    assert code == 0, err
    result = json.loads(out)
    rows = result["rows"]
    assert result["silver"] == "eflomal" and result["pairs"] == 2 and len(rows) == 3 * 4  # every head, no averages
    assert (result["gold"]["file"], result["gold"]["format"]) == (str(gold), "pharaoh")  # how the gold was read
    assert [r["silver_aer"] for r in rows] == sorted(r["silver_aer"] for r in rows)
    assert all(r["gold_aer"] is not None for r in rows) and "median" in result["rule"]
    assert result["aligning"] == [r["attention"] for r in rows if r["aligns"]]
    assert result["spearman"] is None or -1 <= result["spearman"] <= 1
    silver_and_gold = ["--rank-heads", "--silver", "eflomal", "--pairs", str(bitext), "--gold", str(gold)]
    code, out, err = run(capsys, "hf", str(folder), *silver_and_gold, "--top", "2")
    assert code == 0, err
    assert out.splitlines()[0].startswith(f"gold: {gold}: pharaoh or talp (")  # as the gold-only ranking says
    assert "Spearman, silver vs gold AER over 12 heads: " in out


def test_silver_ranking_needs_no_gold(capsys, folder, tmp_path):
    bitext, _ = _bitext(tmp_path)
    code, out, err = run(
        capsys,
        "hf",
        str(folder),
        "--silver",
        "eflomal",
        "--pairs",
        str(bitext),
        "--top",
        "4",
        "--silver-train",
        str(bitext),
    )
    assert code == 0, err
    lines = out.strip().splitlines()
    assert "2 pairs, links by argmax; silver: eflomal" in lines[0] and len(lines) == 2 + 4 + 1
    assert lines[-1].startswith("aligning heads (silver AER <= median") and "Spearman" not in out


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
        (["{folder}", "--silver", "eflomal"], "give --pairs BITEXT"),
        (["{folder}", "--rank-heads"], "--rank-heads needs sentence pairs"),
        (["{folder}", "--pairs", "p.txt", "--src", "a.txt"], "not both"),
        (["{folder}", "--pairs", "p.txt"], "--silver eflomal to rank without gold"),
        (["{folder}", "--silver-train", "p.txt"], "add --silver eflomal"),
        (["{folder}", "--pairs", "p.txt", "--gold", "g.txt", "--margin", "0.3"], "add --silver eflomal"),
        (["{folder}", "x", "--silver", "eflomal", "--pairs", "p.txt"], "give a source sentence"),
        (["{folder}", "--silver", "eflomal", "--pairs", "p.txt", "--layer", "1"], "drop --layer"),
    ],
)
def test_bad_input_is_exit_2_and_one_line(capsys, folder, args, message):
    code, _, err = run(capsys, "hf", *[a.format(folder=folder) for a in args])
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
