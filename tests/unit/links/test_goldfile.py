"""Gold alignment files (Pharaoh, NAACL/talp): notations, malformed lines named, scoring."""

import pytest

from attnviz.data import to_pharaoh
from attnviz.errors import DataError
from attnviz.links.goldfile import (
    GoldFile,
    detect_format,
    parse_gold,
    parse_pharaoh,
    read_gold,
    score_links,
)

LENGTHS = [(3, 3), (2, 2)]  # (source, target) words per sentence


def parse_naacl(lines, lengths, one_based: bool = False):
    return parse_gold(lines, lengths, "naacl", int(one_based)).alignments


def test_pharaoh_question_mark_and_suffix_notations():
    gold = parse_pharaoh(["0-0 1-1 2?1", "0-0"], LENGTHS)
    assert gold[0].sure == {(0, 0), (1, 1)} and gold[0].possible == {(0, 0), (1, 1), (2, 1)}
    assert gold[1].sure == gold[1].possible == {(0, 0)}
    suffix = parse_pharaoh(["0-0-S 1-1 2-1-p", ""], LENGTHS)
    assert suffix[0].sure == gold[0].sure and suffix[0].possible == gold[0].possible
    assert suffix[1].sure == set()
    one_based = parse_pharaoh(["1-1 2-2 3?2", "1-1"], LENGTHS, one_based=True)
    assert [(g.sure, g.possible) for g in one_based] == [(g.sure, g.possible) for g in gold]
    c, per = score_links([{(0, 0), (2, 1), (2, 2)}, {(0, 0)}], gold)
    assert c.aer == pytest.approx(2 / 7) and len(per) == 2
    as_file = GoldFile(gold, "pharaoh", 0, "given")
    assert score_links([{(0, 0), (2, 1), (2, 2)}, {(0, 0)}], as_file)[0] == c  # a GoldFile is its alignments
    with pytest.raises(DataError, match="1 predicted alignments but 2 gold ones"):
        score_links([{(0, 0)}], gold)


def test_a_pharaoh_line_written_reads_back():
    links = [(0, 1), (2, 0), (10, 3)]
    (gold,) = parse_pharaoh([to_pharaoh(links)])
    assert gold.sure == gold.possible == set(links)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["0-0 1-1", "0-0", "1-1"], "line 3: the file has 3 lines but there are 2"),
        (["0-0"], "line 2: the file has 1 line but there are 2 sentence pairs;"),
        (["0-0 1-a", "0-0"], r"line 1: '1-a' is not a Pharaoh link"),
        (["0-0 3-0", "0-0"], "line 1: link 3-0 has an index equal to its sentence's length"),
        (["0-0", "1-5"], r"line 2: link 1-5 is outside its sentence \(2 source and 2 target words, 0-based\)"),
        (["0-0 1?1", "0-0-P"], "line 2: '0-0-P' mixes notations"),
        (["1 1 1 S", "0-0"], "line 1: .* looks like NAACL"),
    ],
)
def test_malformed_pharaoh_names_the_line(lines, message):
    with pytest.raises(DataError, match=message):
        parse_pharaoh(lines, LENGTHS)


def test_a_count_of_one_is_said_in_the_singular():
    with pytest.raises(DataError, match="line 2: the file has 2 lines but there is 1 sentence pair;"):
        parse_pharaoh(["0-0", "0-0"], LENGTHS[:1])


def test_pharaoh_one_based_refuses_index_zero():
    with pytest.raises(
        DataError, match=r"line 1: link 0-1 has an index 0, .* fit 0-based: read it 0-based \(index base 0\)"
    ):
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
        (["1 4 1 S"], "line 1: link 4-1 is outside its sentence"),
    ],
)
def test_malformed_naacl_names_the_line(lines, message):
    with pytest.raises(DataError, match=message):
        parse_naacl(lines, LENGTHS, one_based=True)


def test_read_gold_files(tmp_path):
    path = tmp_path / "gold.talp"
    path.write_text("1 1 1 S\n2 2 2 P\n", encoding="utf-8")
    gold = read_gold(path, LENGTHS, "naacl", base=1).alignments
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
    with pytest.raises(DataError, match=r"gold file line 1: .* is not a (Pharaoh|NAACL) link") as e:
        parse([line, ""], LENGTHS)
    assert len(str(e.value)) < 300


def test_read_files_are_bounded_and_regular(tmp_path, monkeypatch):
    from attnviz.links import textfile

    with pytest.raises(DataError, match="/dev/zero is not a regular file"):
        read_gold("/dev/zero", LENGTHS)
    with pytest.raises(DataError, match="is not a regular file"):
        textfile.file_lines(tmp_path)
    monkeypatch.setattr(textfile, "MAX_FILE_BYTES", 10)
    path = tmp_path / "gold.align"
    path.write_text("0-0 1-1 2-2\n0-0\n")
    with pytest.raises(DataError, match=r"gold\.align is over the 0 MB limit"):
        read_gold(path, LENGTHS)


HANSARDS_LIKE = ["2-2 1-1", "3p1 1-1 2p2 3-3", "1-1"]  # 1-based talp, as the Hansards set ships
HANSARDS_LENGTHS = [(2, 2), (3, 3), (2, 2)]


def test_each_format_is_detected_from_its_lines():
    assert detect_format(["0-0 1?1", "", "2-2"]) == "pharaoh"
    assert detect_format(["0-0-S 1-1-P"]) == "pharaoh"
    assert detect_format(["1-1 2p2", "3-3"]) == "talp"
    assert detect_format(["1 1 1 S", "", "2 3 3 P 0.5", "2 1 1"]) == "naacl"
    assert detect_format(["0-0 1-1", ""]) == "pharaoh"  # sure links only: pharaoh and talp read alike
    assert detect_format([]) == "pharaoh"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["0-0", "1p1 2?2"], "line 2: '1p1 2\\?2' mixes possible-link notations"),
        (["0-0 1?1", "2p2"], "line 2: '2p2' mixes notations: line 1 marks possible links with '\\?'"),
        (["1 1 1 S", "1-1"], "line 2: '1-1' mixes formats: line 1 is NAACL"),
        (["0-0", "the cat ||| le chat"], "line 2: a 'source \\|\\|\\| target' sentence line"),
        (["0-0", "", "0-0 1:1"], "line 3: '1:1' is not a gold link"),
    ],
)
def test_detection_names_the_line_that_fits_no_format(lines, message):
    with pytest.raises(DataError, match=f"g.txt {message}"):
        detect_format(lines, "g.txt")


def test_talp_as_shipped_is_detected_and_read_one_based():
    gold = parse_gold(HANSARDS_LIKE, HANSARDS_LENGTHS, name="enfr.talp")
    assert (gold.format, gold.base, gold.warnings) == ("talp", 1, [])
    assert gold.how.startswith("detected: 0-based is ruled out, line 1: link 2-2 has an index equal to its sentence")
    assert gold.alignments[0].sure == {(0, 0), (1, 1)}
    assert gold.alignments[1].sure == {(0, 0), (2, 2)}
    assert gold.alignments[1].possible == {(0, 0), (1, 1), (2, 0), (2, 2)}
    assert gold.convention().startswith("talp (one line a pair, i-j sure, ipj possible), 1-based (detected:")
    given = parse_gold(HANSARDS_LIKE, HANSARDS_LENGTHS, "talp", 1)
    assert given.how == "given" and [g.possible for g in given.alignments] == [g.possible for g in gold.alignments]


def test_the_base_is_detected_both_ways_and_a_given_base_is_checked():
    zero = parse_gold(["0-0 1-1", "0-1 1-0", "0-0"], [(2, 2)] * 3, name="g.txt")
    assert (zero.format, zero.base) == (
        "pharaoh",
        0,
    ) and "1-based is ruled out, line 1: link 0-0 has an index 0" in zero.how
    one = parse_gold(["1-1 2-2", "1-2 2-1", "1-1"], [(2, 2)] * 3, name="g.txt")
    assert one.base == 1 and [g.sure for g in one.alignments] == [g.sure for g in zero.alignments]
    with pytest.raises(DataError, match=r"g.txt line 1: link 2-2 has an index equal .* 1-based \(index base 1\)"):
        parse_gold(["1-1 2-2", "1-2 2-1", "1-1"], [(2, 2)] * 3, base=0, name="g.txt")
    with pytest.raises(DataError, match=r"g.txt line 1: link 0-0 has an index 0, .* read it 0-based \(index base 0\)"):
        parse_gold(["0-0 1-1", "0-1 1-0", "0-0"], [(2, 2)] * 3, base=1, name="g.txt")
    with pytest.raises(DataError, match="the index base is 0, 1 or auto"):
        parse_gold(["0-0"], [(2, 2)], base=2)


def test_a_file_without_possible_links_is_said_to_read_the_same_as_pharaoh_and_talp():
    sure_only = parse_gold(["1-1 2-2 3-3", "1-1"], [(3, 3), (2, 2)], name="enfr.talp")
    assert (sure_only.format, sure_only.base) == ("pharaoh", 1)
    assert sure_only.convention().startswith(
        "pharaoh or talp (one line a pair, i-j sure; no possible link, so the two coincide), 1-based (detected:"
    )
    given = parse_gold(["1-1 2-2 3-3", "1-1"], [(3, 3), (2, 2)], "talp", 1)
    assert given.convention().startswith("talp or pharaoh (one line a pair, i-j sure; no possible link, so")
    with_possible = parse_gold(["1-1 2p2 3-3", "1-1"], [(3, 3), (2, 2)])
    assert with_possible.convention().startswith("talp (one line a pair, i-j sure, ipj possible), 1-based")


def test_a_base_the_indices_look_wrong_for_is_warned_about():
    # every index fits both bases: the format's usual base, and a warning saying how to give the other
    both = parse_gold(["1-1", "1-2"], [(3, 3), (3, 3)], name="g.txt")
    assert both.base == 0 and both.how == "assumed: pharaoh's usual base"
    assert both.warnings == [
        "g.txt: every index fits both 0- and 1-based numbering; read as 0-based, pharaoh's usual base. Choose "
        "index base 1 if the file's first word is 1"
    ]
    assert parse_gold(["1-1", "1p2"], [(3, 3), (3, 3)]).base == 1  # talp's usual base
    # given 0-based, yet no index is 0 and all fit 1-based: read as asked, with a warning
    asked = parse_gold(["1-1", "1-2"], [(3, 3), (3, 3)], base=0, name="g.txt")
    assert asked.base == 0 and asked.how == "given"
    assert asked.warnings == [
        "g.txt: no index is 0, and every link fits 1-based numbering: is the file 1-based (index base 1)?"
    ]
    assert parse_gold(["0-0", "1-2"], [(3, 3), (3, 3)], base=0).warnings == []


def test_naacl_bases_and_the_null_word():
    lines = ["1 1 1 S", "1 0 2 P", "2 2 2 P", "2 1 1"]  # 1-based: sentence numbers from 1, 0 is NULL
    gold = parse_gold(lines, [(2, 2), (2, 2)], name="g.naacl")
    assert (gold.format, gold.base, gold.null_links) == ("naacl", 1, 1)
    assert "0-based is ruled out, line 2: link 0-2 has an index equal to its sentence's length" in gold.how
    assert "1 links to the NULL word dropped" in gold.convention()
    assert gold.alignments[1].sure == {(0, 0)} and gold.alignments[1].possible == {(0, 0), (1, 1)}
    zero = parse_gold(["0 0 0", "1 1 1 P"], [(2, 2), (2, 2)])
    assert zero.base == 0 and zero.alignments[0].sure == {(0, 0)} and zero.alignments[1].possible == {(1, 1)}


def test_indices_that_fit_neither_base_are_refused():
    zero_based, one_based = r"0-based, line 2: link 2-0", r"1-based, line 1: link 0-0 has an index 0"
    neither = rf"g.txt: the indices fit neither base: {zero_based} .*{one_based}"
    with pytest.raises(DataError, match=neither):
        parse_gold(["0-0", "2-0"], [(2, 2), (2, 2)], name="g.txt")


def test_a_given_format_is_read_as_that_format():
    with pytest.raises(DataError, match=r"line 1: '3p1' is not a Pharaoh link.* read it as talp \(format talp\)"):
        parse_gold(HANSARDS_LIKE[1:2], [(3, 3)], "pharaoh")
    with pytest.raises(DataError, match=r"line 1: '1\?1' is not a talp link.* read it as pharaoh \(format pharaoh\)"):
        parse_gold(["1?1"], [(3, 3)], "talp")
    with pytest.raises(DataError, match=r"line 1: .* mixes formats: .* read it as Pharaoh \(format pharaoh\)"):
        parse_gold(HANSARDS_LIKE, HANSARDS_LENGTHS, "naacl")
    with pytest.raises(DataError, match="unknown gold format 'giza'; choose one of auto, pharaoh, talp, naacl"):
        parse_gold(HANSARDS_LIKE, HANSARDS_LENGTHS, "giza")


def test_score_leaves_out_the_pairs_not_aligned():
    gold = parse_gold(["0-0", "0-0 1-1"], [(2, 2), (2, 2)]).alignments
    corpus, per = score_links([[(0, 0)], None], gold)
    assert (corpus.sure, corpus.aer) == (1, 0.0) and per[1] is None and per[0].aer == 0.0
