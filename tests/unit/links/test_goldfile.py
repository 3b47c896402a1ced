"""Gold alignment files (Pharaoh, NAACL/talp): notations, malformed lines named, scoring."""

import pytest

from attnviz.errors import DataError
from attnviz.links.goldfile import parse_naacl, parse_pharaoh, read_gold, score

LENGTHS = [(3, 3), (2, 2)]  # (source, target) words per sentence


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


@pytest.mark.parametrize(
    ("parse", "line"),
    [
        (parse_pharaoh, "0-" + "1" * 5000),
        (parse_pharaoh, "0-\u00b2"),
        (parse_pharaoh, "0-1234567"),
        (parse_naacl, "1 1 \u00b2 S"),
        (parse_naacl, f"1 1 {'9' * 5000} S"),
    ],
)
def test_indices_are_bounded_ascii_digits(parse, line):
    with pytest.raises(DataError, match=r"gold file line 1: .* (is not a Pharaoh link|is not a NAACL link)") as e:
        parse([line, ""], LENGTHS)
    assert len(str(e.value)) < 300


def test_read_files_are_bounded_and_regular(tmp_path, monkeypatch):
    from attnviz.links import goldfile

    with pytest.raises(DataError, match="/dev/zero is not a regular file"):
        read_gold("/dev/zero", LENGTHS)
    with pytest.raises(DataError, match="is not a regular file"):
        goldfile.read_sentences(tmp_path)
    monkeypatch.setattr(goldfile, "MAX_FILE_BYTES", 10)
    path = tmp_path / "gold.align"
    path.write_text("0-0 1-1 2-2\n0-0\n")
    with pytest.raises(DataError, match=r"gold\.align is over the 0 MB limit"):
        read_gold(path, LENGTHS)
