"""Property tests (hypothesis): hostile gold-file lines give a GoldFile whose links lie inside their
sentences, or a one-line DataError; nothing else escapes parse_gold or the sentence-file reader."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from attnviz.errors import DataError
from attnviz.links import parse_gold, sentence_pairs
from attnviz.links.textfile import text_lines
from tests.support.hostile import hostile_text

FAST = settings(max_examples=300, deadline=None, derandomize=True)
piece = st.sampled_from(
    [
        "0-0",
        "1-2",
        "2?1",
        "3p0",
        "0-1-P",
        "1-1-S",
        "007-1",
        "٣-1",
        "1 2 3",
        "1 2 3 P 0.5",
        "|||",
        "-",
        "?",
        "\t",
        " ",
        "\u2028",
        "\x85",
        "\ufeff",
        "9999999-1",
    ]
)
gold_line = st.lists(piece | hostile_text, max_size=4).map(" ".join)


@FAST
@given(
    st.lists(gold_line, min_size=1, max_size=4),
    st.lists(st.tuples(st.integers(1, 5), st.integers(1, 5)), min_size=1, max_size=4),
    st.sampled_from(["auto", "pharaoh", "talp", "naacl"]),
    st.sampled_from(["auto", 0, 1]),
)
def test_parse_gold_links_inside_or_data_error(lines, lengths, fmt, base):
    try:
        gold = parse_gold(lines, lengths, fmt, base)
    except DataError as e:
        assert str(e).strip()
        return
    assert len(gold.alignments) == len(lengths)
    for (ns, nt), a in zip(lengths, gold.alignments, strict=True):
        assert a.sure <= a.possible
        assert all(0 <= i < ns and 0 <= j < nt for i, j in a.possible)


@FAST
@given(st.lists(hostile_text | st.just("a b ||| c d"), min_size=1, max_size=4), st.booleans())
def test_sentence_files_read_or_data_error(lines, bitext):
    data = "\n".join(lines).encode("utf-8", "surrogatepass")
    try:
        read = text_lines(data, "f.txt")
        src, tgt = sentence_pairs(read, None if bitext else read, ("f.txt", None if bitext else "g.txt"))
    except DataError as e:
        assert str(e).strip()
        return
    assert len(src) == len(tgt)
    assert all(isinstance(w, str) and w and not w.isspace() for s in src + tgt for w in s)
