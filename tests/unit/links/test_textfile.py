"""The text side of a gold set: sentence files or a ``source ||| target`` bitext, read as given words."""

import re

import pytest

from attnviz.errors import DataError
from attnviz.links.textfile import bitext, check_pairs, is_bitext, read_pairs, sentence_pairs, text_lines


def test_a_bitext_as_shipped_is_read_as_given_words(tmp_path):
    path = tmp_path / "test.en-fr"
    path.write_text(
        "2 .   ||| 2 .  \nlet us remember , Mr. Speaker   ||| souvenons - nous , monsieur  \n", encoding="utf-8"
    )
    sources, targets = read_pairs(path)
    assert sources == [["2", "."], ["let", "us", "remember", ",", "Mr.", "Speaker"]]
    assert targets == [["2", "."], ["souvenons", "-", "nous", ",", "monsieur"]]
    assert is_bitext(["", "a ||| b"]) and not is_bitext(["a b", "c ||| d"])


def test_two_sentence_files_are_read_line_by_line(tmp_path):
    (tmp_path / "s.txt").write_text("Mr. Speaker\nhear , hear !\n", encoding="utf-8")
    (tmp_path / "t.txt").write_text("monsieur le Orateur\nbravo !\n", encoding="utf-8")
    sources, targets = read_pairs(tmp_path / "s.txt", tmp_path / "t.txt")
    assert sources[0] == ["Mr.", "Speaker"] and targets[1] == ["bravo", "!"]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["a ||| b", "c d"], "bi line 2: no ' ||| ' separator in 'c d'"),
        (["a ||| b ||| c"], "bi line 1: 2 ' ||| ' separators"),
    ],
)
def test_a_bad_bitext_line_is_named(lines, message):
    with pytest.raises(DataError, match=re.escape(message)):
        bitext(lines, "bi")


def test_the_layouts_are_not_mixed_up():
    with pytest.raises(DataError, match=re.escape("s.txt: its first line has no ' ||| '; give a 'source ||| target'")):
        sentence_pairs(["a b"], None, ("s.txt", None))
    with pytest.raises(DataError, match=re.escape("s.txt line 1 holds ' ||| ': a 'source ||| target' bitext")):
        sentence_pairs(["a ||| b"], ["b"], ("s.txt", "t.txt"))
    with pytest.raises(DataError, match=r"s\.txt has 2 lines but t\.txt has 1"):
        sentence_pairs(["a", "b"], ["c"], ("s.txt", "t.txt"))
    with pytest.raises(DataError, match="bi line 2: an empty target sentence"):
        check_pairs([["a"], ["b"]], [["c"], []], ("bi", "bi"))


def test_a_text_without_pairs_is_refused_not_scored_as_perfect(tmp_path):
    with pytest.raises(DataError, match=r"s\.txt holds no sentence pairs"):
        check_pairs([], [], ("s.txt", "t.txt"))


def test_lines_end_where_editors_and_translate_end_them(tmp_path):
    # U+2028, U+0085 and a form feed stay inside their line; \r\n and \r end one; a BOM is not a word
    src = tmp_path / "src.txt"
    src.write_bytes("\ufeffthe black\u2028cat .\r\nthe\x0capple\u0085.\rthe end .\n".encode())
    tgt = tmp_path / "tgt.txt"
    tgt.write_bytes(b"le chat noir .\nla pomme .\nla fin .")
    sources, targets = read_pairs(str(src), str(tgt))
    assert sources == [["the", "black", "cat", "."], ["the", "apple", "."], ["the", "end", "."]]
    assert len(targets) == 3
    assert text_lines(b"a\r\r\nb", "f") == ["a", "", "b"]  # as editors show it: an empty line between


def test_a_utf16_gold_set_as_windows_writes_it_is_read(tmp_path):
    bitext_file = tmp_path / "pairs.txt"  # Notepad's "Unicode", Windows PowerShell's `>`
    bitext_file.write_bytes("the café . ||| le café .\r\nyes ||| oui\r\n".encode("utf-16"))
    sources, targets = read_pairs(str(bitext_file))
    assert sources == [["the", "café", "."], ["yes"]] and targets == [["le", "café", "."], ["oui"]]
    with pytest.raises(DataError, match=r"f: not UTF-16-LE text \(truncated data"):
        text_lines(b"\xff\xfea\x00b", "f")


def test_utf16_without_its_mark_is_named_not_read_as_words_with_nul_bytes(tmp_path):
    path = tmp_path / "pairs.txt"
    path.write_bytes("the cat . ||| le chat .\n".encode("utf-16-le"))
    with pytest.raises(DataError, match=r"pairs.txt looks like UTF-16 without a byte-order mark; re-save it as UTF-8"):
        read_pairs(str(path))


def test_a_missing_file_is_attnviz_error_a_library_caller_can_catch(tmp_path):
    from attnviz.errors import AttnvizError
    from attnviz.links import read_gold

    with pytest.raises(AttnvizError, match=r"no file at .*nowhere\.en-fr; give the path of a text file"):
        read_pairs(tmp_path / "nowhere.en-fr")
    with pytest.raises(AttnvizError, match=r"no file at .*nowhere\.talp"):
        read_gold(tmp_path / "nowhere.talp", [(1, 1)])
