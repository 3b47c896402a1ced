"""Property tests (hypothesis) of attnviz.data: BPE pieces join back into their word, Vocab encode/decode,
the text-file line cutter with byte-order marks, and a CSV/TSV table written by the csv module read back
by load_table."""

from __future__ import annotations

import codecs
import csv

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from attnviz.data.bpe import BPE, MARK, join_pieces, word_spans
from attnviz.data.tables import load_table
from attnviz.data.vocab import EOS_ID, SPECIALS, Vocab
from attnviz.links.textfile import text_lines

FAST = settings(max_examples=200, deadline=None, derandomize=True)

letters = st.sampled_from([*list("aabcde"), "é", "é", "ß", "😀", "👍🏽", "क्", "ि", "@", "-", "\u200d"])
words = st.lists(letters, min_size=1, max_size=12).map("".join)


@pytest.fixture(scope="module")
def bpe() -> BPE:
    corpus = [
        "the",
        "cat",
        "sat",
        "on",
        "the",
        "mat",
        "and",
        "the",
        "cats",
        "sat",
        "on",
        "the",
        "mats",
        "été",
        "ete",
        "😀😀",
        "👍🏽",
        "a@b",
        "a@@",
        "c@@d",
    ] * 3
    return BPE.learn(corpus, merges=40)


@settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(words.filter(lambda w: not w.endswith(MARK)))
def test_bpe_pieces_join_back(bpe, word):
    pieces = bpe.segment(word)
    assert "".join(p.removesuffix(MARK) for p in pieces[:-1]) + pieces[-1] == word
    assert all(p.endswith(MARK) for p in pieces[:-1])
    assert join_pieces(pieces) == [word]
    spans = word_spans(list(pieces))
    assert spans == [(0, len(pieces))] * len(pieces)


@settings(
    max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(words.filter(lambda w: not w.endswith(MARK)), min_size=1, max_size=6))
def test_bpe_sentences_join_back(bpe, sentence):
    assert join_pieces(bpe.segment_all(sentence)) == sentence


# tokens as a tokenizer makes them: no control characters or line separators (a vocabulary refuses those)
token = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=4)


@FAST
@given(st.lists(st.lists(token, max_size=6), max_size=6), st.lists(st.text(max_size=4), max_size=8))
def test_vocab_encode_decode(sentences, probe):
    v = Vocab.build(sentences)
    assert v.itos[:4] == list(SPECIALS) and len(set(v.itos)) == len(v)
    assert Vocab.from_list(v.to_list()) == v
    known = [t for t in probe if t in v and t not in SPECIALS]
    assert v.decode(v.encode(known, bos=True, eos=True)) == known
    assert v.decode(v.encode(known), strip=False) == known
    ids = v.encode([*probe, "x"], eos=True)
    assert ids[-1] == EOS_ID and all(0 <= i < len(v) for i in ids)


line_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\x00"), max_size=15
)  # NUL: a binary file


@FAST
@given(
    st.lists(line_text, min_size=1, max_size=6),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-32"]),
    st.booleans(),
)
def test_text_lines_round_trip(lines, newline, encoding, last_newline):
    """Lines joined by any newline, in UTF-8 (with or without its mark) or UTF-16/32 with theirs, cut back;
    U+2028, U+0085 and form feeds stay inside their line."""
    text = newline.join(lines) + (newline if last_newline else "")
    got = text_lines(text.encode(encoding), "f.txt")
    want = list(lines)
    if not last_newline and want[-1] == "":
        want = want[:-1]  # an empty last line without a newline is no line
    assume(want)
    if encoding == "utf-8-sig" or (encoding == "utf-8" and want and want[0].startswith("\ufeff")):
        want[0] = want[0].removeprefix("\ufeff")  # the sentence-file reader drops one leading mark
    assert got == want


TABLES = settings(
    max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

cell = st.lists(
    st.sampled_from([*list("ab ,;\"'\t\n\r|é😀"), "\ufeff", "\u2028", "\x85", "NA", "007"]), min_size=1, max_size=8
).map("".join)


@TABLES
@given(st.lists(st.tuples(cell, cell), min_size=1, max_size=4), st.booleans())
@example([('a,"b"\nc', "NA")], True)
def test_csv_round_trip(tmp_path_factory, rows, bom):
    """A CSV written by Python's csv module (quotes, commas, newlines inside fields) reads back as written."""
    assume(all(s.strip() and t.strip() for s, t in rows))
    path = tmp_path_factory.mktemp("csv") / "t.csv"
    with open(path, "w", encoding="utf-8-sig" if bom else "utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["src", "tgt"])
        w.writerows(rows)
    got, notes = load_table(path, "src", "tgt")
    assert got == [tuple(r) for r in rows] and not notes


tsv_cell = st.lists(st.sampled_from([*list("ab ,;\"'|é😀"), "\u2028", "NA", "007", "\\"]), min_size=1, max_size=8).map(
    "".join
)


@TABLES
@given(st.lists(st.tuples(tsv_cell, tsv_cell), min_size=1, max_size=4), st.booleans())
@example([('"a', 'b"')], False)
def test_tsv_round_trip(tmp_path_factory, rows, bom):
    """A TSV (no tab or newline inside a field) reads back as written: quotes are plain characters."""
    assume(all(s.strip() and t.strip() for s, t in rows))
    path = tmp_path_factory.mktemp("tsv") / "t.tsv"
    text = "src\ttgt\n" + "".join(f"{s}\t{t}\n" for s, t in rows)
    path.write_bytes((codecs.BOM_UTF8 if bom else b"") + text.encode())
    got, notes = load_table(path, "src", "tgt")
    assert got == [tuple(r) for r in rows] and not notes
