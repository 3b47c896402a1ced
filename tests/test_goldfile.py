"""Gold alignment files (Pharaoh, NAACL/talp), precision/recall/AER, and the align-eval CLI."""

import json

import pytest

from attnviz.cli.main import main
from attnviz.data import to_pharaoh
from attnviz.errors import DataError
from attnviz.evaluation.metrics import AlignmentCounts, aer, alignment_counts
from attnviz.links.extract import align_corpus
from attnviz.links.goldfile import parse_naacl, parse_pharaoh, read_gold, score
from attnviz.store.checkpoint import save

LENGTHS = [(3, 3), (2, 2)]  # (source, target) words per sentence


def test_precision_recall_aer_by_hand():
    # S = {0-0, 1-1}, P = S + {2-1}; A = {0-0, 2-1, 2-2}: |A∩S| = 1, |A∩P| = 2
    first = alignment_counts([{(0, 0), (2, 1), (2, 2)}], [{(0, 0), (1, 1)}], [{(2, 1)}])[0]
    assert (first.precision, first.recall) == (pytest.approx(2 / 3), 0.5)
    assert first.aer == pytest.approx(1 - (1 + 2) / (3 + 2))
    second = alignment_counts([{(0, 0)}], [{(0, 0)}])[0]
    assert (second.precision, second.recall, second.aer, second.f1) == (1.0, 1.0, 0.0, 1.0)
    corpus = first + second  # counts add up: |A| = 4, |S| = 3, |A∩S| = 2, |A∩P| = 3
    assert corpus == AlignmentCounts(predicted=4, sure=3, predicted_sure=2, predicted_possible=3)
    assert (corpus.precision, corpus.recall) == (0.75, pytest.approx(2 / 3))
    assert corpus.aer == pytest.approx(2 / 7)
    assert aer([{(0, 0), (2, 1), (2, 2)}, {(0, 0)}], [{(0, 0), (1, 1)}, {(0, 0)}], [{(2, 1)}, set()]) == (
        pytest.approx(2 / 7)
    )
    empty = AlignmentCounts()
    assert (empty.precision, empty.recall, empty.aer) == (1.0, 1.0, 0.0)


def test_possible_links_never_count_as_sure_misses():
    # predicting only a possible link: precision 1, recall 0 (sure ⊆ possible, not the reverse)
    c = alignment_counts([{(2, 1)}], [{(0, 0)}], [{(0, 0), (2, 1)}])[0]
    assert (c.precision, c.recall, c.aer) == (1.0, 0.0, pytest.approx(1 - 1 / 2))


def test_pharaoh_question_mark_and_suffix_notations():
    gold = parse_pharaoh(["0-0 1-1 2?1", "0-0"], LENGTHS)
    assert gold[0].sure == {(0, 0), (1, 1)} and gold[0].possible == {(0, 0), (1, 1), (2, 1)}
    assert gold[1].sure == gold[1].possible == {(0, 0)}
    suffix = parse_pharaoh(["0-0-S 1-1 2-1-p", ""], LENGTHS)
    assert suffix[0].sure == gold[0].sure and suffix[0].possible == gold[0].possible
    assert suffix[1].sure == set()
    one_based = parse_pharaoh(["1-1 2-2 3?2", "1-1"], LENGTHS, one_based=True)
    assert [(g.sure, g.possible) for g in one_based] == [(g.sure, g.possible) for g in gold]
    c, per = score([{(0, 0), (2, 1), (2, 2)}, {(0, 0)}], gold)
    assert c.aer == pytest.approx(2 / 7) and len(per) == 2


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["0-0 1-1", "0-0", "1-1"], "line 3: the file has 3 lines but there are 2"),
        (["0-0"], "line 2: the file has 1 lines"),
        (["0-0 1-a", "0-0"], r"line 1: '1-a' is not a Pharaoh link"),
        (["0-0 3-0", "0-0"], "line 1: link 3-0 is outside sentence 0"),
        (["0-0", "1-2"], "line 2: link 1-2 is outside sentence 1"),
        (["0-0 1?1", "0-0-P"], "line 2: '0-0-P' mixes formats"),
        (["1 1 1 S", "0-0"], "line 1: .* looks like NAACL"),
    ],
)
def test_malformed_pharaoh_names_the_line(lines, message):
    with pytest.raises(DataError, match=message):
        parse_pharaoh(lines, LENGTHS)


def test_pharaoh_one_based_refuses_index_zero():
    with pytest.raises(DataError, match="line 1: link 0-1 is outside sentence 1"):
        parse_pharaoh(["0-1", "1-1"], LENGTHS, one_based=True)


def test_naacl_sure_possible_confidence_and_null():
    lines = ["1 1 1 S", "1 3 2 P", "1 2 2", "", "2 1 1 S 0.9", "1 0 2 S", "1 1 0 P"]
    gold = parse_naacl(lines, LENGTHS, one_based=True)
    assert gold[0].sure == {(0, 0), (1, 1)} and gold[0].possible == {(0, 0), (1, 1), (2, 1)}
    assert gold[1].sure == {(0, 0)}  # 0 is the NULL word in 1-based files: dropped
    zero_based = parse_naacl(["0 0 0 S", "0 2 1 P 0.5", "1 1 1"], LENGTHS)
    assert zero_based[0].possible == {(0, 0), (2, 1)} and zero_based[1].sure == {(1, 1)}


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["1 1 1 S", "3 1 1 S"], "line 2: sentence 3 does not exist"),
        (["1 1 x S"], "line 1: .* is not a NAACL link"),
        (["1 1 1 X"], "line 1: 'X' should be S or P"),
        (["1 1 1 S 0.5 7"], "line 1: .* is not a NAACL link"),
        (["1 1 1 S", "1-1 2-2"], "line 2: .* mixes formats"),
        (["1 4 1 S"], "line 1: link 4-1 is outside sentence 1"),
    ],
)
def test_malformed_naacl_names_the_line(lines, message):
    with pytest.raises(DataError, match=message):
        parse_naacl(lines, LENGTHS, one_based=True)


def test_read_gold_files(tmp_path):
    path = tmp_path / "gold.talp"
    path.write_text("1 1 1 S\n2 2 2 P\n", encoding="utf-8")
    gold = read_gold(path, LENGTHS, "naacl", one_based=True)
    assert gold[1].possible == {(1, 1)} and gold[1].sure == set()
    with pytest.raises(DataError, match="unknown gold format"):
        read_gold(path, LENGTHS, "giza")
    path.write_bytes(b"0-0 \xff\n")
    with pytest.raises(DataError, match="not UTF-8"):
        read_gold(path, LENGTHS)


@pytest.fixture
def files(trained, tmp_path, monkeypatch):
    """Sentence files and a gold file that holds the model's own argmax links (so AER is 0)."""
    model = save(trained, tmp_path / "models" / "rev.safetensors")
    monkeypatch.setenv("ATTNVIZ_MODELS", str(model.parent))
    monkeypatch.chdir(tmp_path)
    sources, targets = [["a", "b", "c", "d"], ["e", "f", "g"]], [["d", "c", "b", "a"], ["g", "f", "e"]]
    (tmp_path / "src.txt").write_text("".join(" ".join(s) + "\n" for s in sources), encoding="utf-8")
    (tmp_path / "tgt.txt").write_text("".join(" ".join(t) + "\n" for t in targets), encoding="utf-8")
    own = align_corpus(trained, sources, targets)
    (tmp_path / "gold.txt").write_text("".join(to_pharaoh(links) + "\n" for links in own), encoding="utf-8")
    return str(model)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_align_eval_json(capsys, files):
    args = ["align-eval", "--model", files, "--src", "src.txt", "--tgt", "tgt.txt", "--gold", "gold.txt"]
    code, out, _ = run(capsys, *args, "--json", "--per-sentence")
    data = json.loads(out)
    assert code == 0 and data["method"] == "argmax" and data["n"] == 2
    assert (data["precision"], data["recall"], data["aer"]) == (1.0, 1.0, 0.0)
    assert [s["predicted"] for s in data["sentences"]] == [4, 3]
    code, out, _ = run(capsys, *args, "--method", "union", "--reverse-model", files)
    assert code == 0 and "recall: 1.0" in out  # the union holds the forward argmax links


def test_cli_align_eval_bad_input_exits_2(capsys, files, tmp_path):
    base = ["align-eval", "--model", files, "--src", "src.txt", "--tgt", "tgt.txt"]
    (tmp_path / "short.txt").write_text("0-3\n", encoding="utf-8")
    code, _, err = run(capsys, *base, "--gold", "short.txt")
    assert code == 2 and "short.txt line 2" in err and len(err.strip().splitlines()) == 1
    (tmp_path / "talp.txt").write_text("1 1 4 S\n2 1 3\n", encoding="utf-8")
    code, _, err = run(capsys, *base, "--gold", "talp.txt", "--format", "naacl", "--json")
    assert code == 2 and "link 1-4 is outside sentence 1" in err and "--one-based" in err
    code, out, _ = run(capsys, *base, "--gold", "talp.txt", "--format", "naacl", "--one-based", "--json")
    assert code == 0 and json.loads(out)["sure"] == 2
    (tmp_path / "odd.txt").write_text("a b c\n", encoding="utf-8")
    code, _, err = run(capsys, "align-eval", "--model", files, "--src", "odd.txt", "--tgt", "tgt.txt", "--gold", "x")
    assert code == 2 and "odd.txt has 1 lines but tgt.txt has 2" in err
    code, _, err = run(capsys, *base, "--gold", "missing.txt")
    assert code == 2 and "missing.txt" in err
