"""Word links from attention files and their score against gold, in the library and through
``attnviz attention`` (bad input: exit 2 with one line)."""

from __future__ import annotations

import json
from itertools import pairwise

import numpy as np
import pytest

from attnviz.errors import DataError, InputError
from attnviz.external import EXAMPLE_ATTENTION, read_attention, score_files, word_links
from tests.support.cli import run

PIECES = {
    "source_tokens": ["the", "bl@@", "ack", "cat", "</s>"],
    "target_tokens": ["le", "chat", "noir", "</s>"],
    "weights": [
        [0.9, 0.0, 0.0, 0.05, 0.05],
        [0.0, 0.1, 0.0, 0.8, 0.1],
        [0.0, 0.3, 0.4, 0.2, 0.1],
        [0.0, 0.0, 0.0, 0.0, 1.0],
    ],
}


def test_pieces_merge_into_words_and_eos_links_nothing():
    al = read_attention(json.dumps(PIECES).encode()).alignments["attention"]
    wa = word_links(al)
    assert wa.source_words == ["the", "black", "cat"] and wa.target_words == ["le", "chat", "noir"]
    assert wa.to_pharaoh() == "0-0 1-2 2-1"
    assert word_links(al, "threshold", 0.3).links == [(0, 0), (1, 2), (2, 1)]
    path = word_links(al, "dtw").links  # the monotonic path: every word on both sides, no reordering
    assert {s for s, _ in path} == {0, 1, 2} and {t for _, t in path} == {0, 1, 2}
    assert all(s2 >= s1 and t2 >= t1 for (s1, t1), (s2, t2) in pairwise(path))
    with pytest.raises(InputError, match="one direction"):
        word_links(al, "grow-diag")


def test_each_matrix_is_scored_against_gold():
    f = read_attention(json.dumps(EXAMPLE_ATTENTION).encode())
    corpus, per_sentence = score_files([f, f], ["0-0 1-2 2-1", "0-0 2-1"])
    rows = {r["aligner"]: r for r in corpus}
    assert rows["layer 0 head 0"]["AER"] == round(1 - (5 + 5) / (6 + 5), 3)  # 6 links, 5 of them the 5 sure
    assert rows["layer 0 head 1"]["AER"] == round(1 - (4 + 4) / (6 + 5), 3) and len(per_sentence) == 2
    with pytest.raises(DataError, match=r"gold file line 1: link 3-1 has an index equal to its sentence.s length"):
        score_files([f], ["3-1"], base=0)


@pytest.fixture
def files(tmp_path):
    example = tmp_path / "example.json"
    example.write_text(json.dumps(EXAMPLE_ATTENTION))
    buffer = tmp_path / "stack.npz"
    np.savez(
        buffer,
        source_tokens=np.array(PIECES["source_tokens"]),
        target_tokens=np.array(PIECES["target_tokens"]),
        weights=np.array([PIECES["weights"]] * 2),
        names=np.array(["a", "b"]),
    )
    gold = tmp_path / "gold.txt"
    gold.write_text("0-0 1-2 2-1\n")
    return str(example), str(buffer), str(gold)


def test_cli_lists_links_and_scores(capsys, files):
    example, stack, gold = files
    code, out, _ = run(capsys, "attention", example, "--matrix", "layer 0 head 0")
    assert code == 0 and out.split() == [example, "layer", "0", "head", "0", "[4", "x", "4]", "0-0", "1-2", "2-1"]
    code, out, _ = run(capsys, "attention", stack, "--gold", gold, "--json")
    result = json.loads(out)
    assert code == 0 and [r["aer"] for r in result["matrices"]] == [0.0, 0.0]
    keys = {"aligner", "precision", "recall", "f1", "aer", "pairs", "predicted", "sure"}  # align-eval's names
    assert set(result["matrices"][0]) == keys and result["matrices"][0]["sure"] == 3
    code, out, _ = run(capsys, "attention", example, "--gold", gold)
    assert code == 0 and out.splitlines()[1].startswith("layer 0 head 0")  # best AER first


def test_cli_lists_each_files_own_matrices(capsys, files):
    example, stack, _ = files  # the example's matrices are "layer 0 head 0" and "…1"; the stack's "a" and "b"
    code, out, _ = run(capsys, "attention", example, stack)
    listed = [line.split("  ")[:2] for line in out.splitlines()]
    assert code == 0 and listed == [
        [example, "layer 0 head 0"],
        [example, "layer 0 head 1"],
        [stack, "a"],
        [stack, "b"],
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.json"], "missing.json is not a file"),
        (["{stack}", "--matrix", "c"], "has no matrix named 'c'"),
        (["{stack}", "--gold", "nogold.txt"], "no file at nogold.txt; give the path of a text file"),
        (["{bad}"], "field 'weights'"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(capsys, files, tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.json").write_text('{"source_tokens": ["a"], "target_tokens": ["b"], "weights": [[0.5, 0.5]]}')
    args = [a.format(stack=files[1], bad="bad.json") for a in args]
    code, out, err = run(capsys, "attention", *args)
    assert code == 2 and not out and len(err.strip().splitlines()) == 1 and message in err
