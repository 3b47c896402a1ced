"""Property-based fuzzing (hypothesis): hostile input never raises anything but an ``AttnvizError``.

Covered: the tokenizers and ``clean_text``, ``Translator.translate``/``align`` on the session
``trained`` model, ``load_corpus`` on generated and garbage CSV/TSV/JSON Lines/Parquet files, and
the Plotly builders (tokens are HTML-escaped in every label and hover). Hostile text includes
empty and whitespace-only text, 20,000 characters, control characters and NUL, emoji,
right-to-left and combining characters, lone surrogates, HTML/script and only unknown words.

Generated inputs per run (``max_examples``; the explicit ``@example`` cases come on top):

    clean_text 2000 + split 3000 + detokenize round trip 2000      tokenizers  7000
    translate 1600 + align 1000                                    translator  2600
    hostile tables 90 + well-formed tables 40 + garbage bytes 300  loaders      430
    plots 50 + comparison/exploration/data plots 15                plots         65
                                                                   total     10095

About a minute on one core (the loaders and the Plotly builders take half of it).
"""

from __future__ import annotations

import csv
import gzip
import html
import io
import itertools
import json
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from attnviz.data import corpora
from attnviz.data.pairs import Corpus
from attnviz.data.spec import load_corpus
from attnviz.data.tokenize import KINDS, Tokenizer, clean_text
from attnviz.data.vocab import EOS
from attnviz.decoding.trace import Alignment
from attnviz.decoding.translator import MAX_INPUT_CHARS, Translator
from attnviz.errors import AttnvizError, InputError
from attnviz.plots import compare as plots_compare
from attnviz.plots import context as plots_context
from attnviz.plots import data as plots_data
from attnviz.plots import explore as plots_explore
from attnviz.plots import heatmap as plots

# -- hostile text ----------------------------------------------------------------------------

HOSTILE = [
    "",
    " ",
    " \t\n\r\x0b\x0c \u00a0\u2003\u3000 ",
    "\x00",
    "a\x00b \x00\x00 c",
    "\x07\x1b[31mred\x1b[0m\x7f\x85",
    "😀 👍🏽 🇫🇷 👨‍👩‍👧 🏳️‍🌈",
    "שלום עולם",
    "مرحبا بالعالم ١٢٣",
    "\u202eevil\u202c \u200fmark\u200e",
    "e\u0301 a\u0308\u0308\u0308 Z\u0351\u0324\u035b x\u20dd",
    "\u0301\u0301 \u0301",
    "हिन्दी भाषा",
    "<script>alert(1)</script>",
    "<b>x</b>",
    "&lt;b&gt; &amp; &#60;script&#62;",
    "\"quoted\", 'single', `back`",
    "zzyzx qwfp xylophonic",
    "\ufeffbom \u200b\u200d\u2028\u2029",
    "\ud800 lone \udfff surrogates",
    "don't re-enter -- ' - ’",
    "İstanbul ǅ ß ﬁ ΣΑΣ",
    "<eos> <unk> <pad> <bos>",
    "%{text} ${x} {{x}} \\n \\x00",
]
SHORT = [t for t in HOSTILE if t.strip()]
LONG = 20_000


def long_text(piece: str) -> str:
    """``piece`` repeated to exactly 20,000 characters."""
    return (piece * (LONG // max(len(piece), 1) + 1))[:LONG]


any_char = st.characters()  # every category, Cc (NUL) and Cs (lone surrogates) included
hostile_text = st.one_of(
    st.text(any_char),
    st.sampled_from(HOSTILE),
    st.lists(st.sampled_from(HOSTILE), max_size=6).map(" ".join),
    st.lists(st.one_of(st.sampled_from(SHORT), st.text(any_char, max_size=5)), max_size=6).map("".join),
    st.sampled_from([*SHORT, " ", "\x00", "a "]).map(long_text),
)
TOKENIZERS = [Tokenizer(kind, lowercase) for kind in KINDS for lowercase in (True, False)]

# -- tokenizers ------------------------------------------------------------------------------


def is_control(c: str) -> bool:
    return unicodedata.category(c) in ("Cc", "Cs")


@settings(max_examples=2000, deadline=None)
@given(hostile_text)
@example("")
@example(long_text("\x00"))
def test_clean_text(text: str) -> None:
    """Control characters become spaces one for one (newlines kept); the result is NFC and stable."""
    out = clean_text(text)
    assert len(out) == len(unicodedata.normalize("NFC", text))
    assert not any(is_control(c) and c != "\n" for c in out)
    assert unicodedata.is_normalized("NFC", out)
    assert clean_text(out) == out


@settings(max_examples=3000, deadline=None)
@given(st.sampled_from(TOKENIZERS), hostile_text)
@example(Tokenizer("word"), "")
@example(Tokenizer("char"), " \t\n ")
@example(Tokenizer("word"), long_text("😀 "))
@example(Tokenizer("char", lowercase=False), long_text("\x00"))
def test_tokenizer_split(tok: Tokenizer, text: str) -> None:
    """Tokens are non-empty, free of control characters, deterministic, and cover the non-space text."""
    surface = tok.split(text)
    tokens = tok.tokenize(text)
    assert tokens == tok.tokenize(text) == Tokenizer(tok.kind, tok.lowercase).tokenize(text)
    assert tokens == [tok.normalize(t) for t in surface]
    if not tok.lowercase:
        assert tokens == surface
    assert all(t and not any(is_control(c) for c in t) for t in [*surface, *tokens])
    visible = clean_text(text).split()
    if tok.kind == "word":
        assert all(not any(c.isspace() for c in t) for t in surface)
        assert "".join(surface) == "".join(visible)
        for t in surface:  # a word is letters/digits with inner ' ’ -; anything else stands alone
            if len(t) > 1:
                assert all(c.isalnum() or c in "'’-" for c in t) and t[0].isalnum() and t[-1].isalnum()
    else:
        assert all(len(t) == 1 for t in surface)
        assert "".join(surface) == " ".join(visible)
    assert Tokenizer.from_dict(tok.to_dict()) == tok


@settings(max_examples=2000, deadline=None)
@given(st.sampled_from(TOKENIZERS), hostile_text)
@example(Tokenizer("word"), "a 's ( x ) «y» z .")
@example(Tokenizer("char"), "e\u2003\u0301  <b>")
def test_tokenizer_round_trip(tok: Tokenizer, text: str) -> None:
    """``detokenize`` only adds spaces; characters round-trip exactly, words up to where spaces fall."""
    surface = tok.split(text)
    out = tok.detokenize(surface)
    assert isinstance(out, str) and not any(is_control(c) for c in out)
    again = tok.split(out)
    if tok.kind == "char":
        assert out == "".join(surface) == " ".join(clean_text(text).split())
        assert again == surface
    else:
        assert "".join(out.split()) == "".join(surface) == "".join(again)
    tok.detokenize(tok.tokenize(text))
    tok.detokenize([*surface, EOS, "", " "])


# -- translate and align ---------------------------------------------------------------------


def source_error(tr: Translator, text: str) -> bool:
    """Whether ``text`` is one a translator must refuse (empty, too long, too many tokens)."""
    n = len(tr.src_tokenizer.split(text))
    return len(text) > MAX_INPUT_CHARS or n == 0 or n > tr.max_source_tokens


def check_refusal(e: InputError) -> None:
    """A refusal is an AttnvizError with a one-line message."""
    assert isinstance(e, AttnvizError)
    msg = str(e)
    assert msg.strip() and "\n" not in msg


def check_alignment(tr: Translator, al: Alignment, text: str) -> None:
    """Finite weights ``[tgt, src]`` whose rows sum to 1; source tokens as typed, plus ``<eos>``."""
    w = np.asarray(al.weights, dtype=np.float64)
    assert w.shape == (len(al.target_tokens), len(al.source_tokens))
    assert np.isfinite(w).all() and (w >= 0).all()
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-4)
    surface = tr.src_tokenizer.split(text)
    assert al.source_tokens == [*surface, EOS]
    unknown = [tr.src_tokenizer.normalize(t) not in tr.src_vocab for t in surface]
    assert al.source_unknown == [*unknown, False]
    json.dumps(al.to_dict(), allow_nan=False)
    assert isinstance(tr.text_of(al), str)


vocabulary_words = st.sampled_from([*"abcdefgh", "zzz", "😀", "<b>", "\x00"])
many_words = st.lists(vocabulary_words, min_size=95, max_size=105).map(" ".join)  # around the token limit


@settings(max_examples=1600, deadline=None)
@given(st.one_of(hostile_text, many_words), st.sampled_from([1, 1, 1, 2]))
@example("", 1)
@example(" \t\n\x00 ", 1)
@example(long_text("a "), 1)
@example("a " * 99, 2)
@example("a " * 100, 1)
@example("x" * MAX_INPUT_CHARS, 1)
@example("x" * (MAX_INPUT_CHARS + 1), 1)
@example("zzyzx qwfp xylophonic", 2)
@example("<script>alert(1)</script> <b>x</b>", 1)
@example("\u202eא ב\u202c e\u0301 😀\x00", 1)
def test_translate(trained: Translator, text: str, beam_size: int) -> None:
    """``translate`` returns a well-formed alignment or refuses with an InputError, nothing else."""
    try:
        al = trained.translate(text, beam_size=beam_size)
    except InputError as e:
        check_refusal(e)
        assert source_error(trained, text)
        event("refused")
        return
    event("translated")
    assert not source_error(trained, text)
    check_alignment(trained, al, text)
    assert al.target_tokens and len(al.target_tokens) <= trained.default_max_len(len(al.source_tokens))
    if beam_size > 1:
        assert 1 <= len(al.hypotheses) <= beam_size
        for hyp in al.hypotheses:
            check_alignment(trained, hyp, text)
    else:
        assert al.hypotheses == []


@settings(max_examples=1000, deadline=None)
@given(st.one_of(hostile_text, many_words), hostile_text)
@example("a b c", "")
@example("", "a b c")
@example("a b c", long_text("x "))
@example("a b c", long_text("x"))
@example("a b c", "<eos> \x00 <script>alert(1)</script>")
@example("zzz qqq", "zzz qqq")
def test_align(trained: Translator, source: str, target: str) -> None:
    """Forced decoding: one row per target token typed (plus <eos>), or an InputError."""
    n_target = len(trained.tgt_tokenizer.split(target))
    try:
        al = trained.align(source, target)
    except InputError as e:
        check_refusal(e)
        assert source_error(trained, source) or not 1 <= n_target <= 1000
        event("refused")
        return
    event("aligned")
    check_alignment(trained, al, source)
    assert al.target_tokens == [*trained.tgt_tokenizer.split(target), EOS]


# -- data loaders ----------------------------------------------------------------------------

_names = itertools.count()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder for generated files, with the ``datasets`` cache inside it (restored afterwards)."""
    folder = tmp_path_factory.mktemp("fuzz-data")
    saved = corpora.CACHE_DIR
    corpora.CACHE_DIR = folder / "cache"
    yield folder
    corpora.CACHE_DIR = saved


def fresh(folder: Path, suffix: str, data: bytes) -> Path:
    """A new file (never reused: the ``datasets`` cache keys on path and mtime)."""
    path = folder / f"f{next(_names)}{suffix}"
    path.write_bytes(data)
    return path


def check_load(spec: str, **kwargs) -> None:
    """``load_corpus`` gives a usable Corpus or a one-line AttnvizError; anything else fails the test."""
    try:
        corpus = load_corpus(spec, **kwargs)
    except AttnvizError as e:
        msg = str(e)
        assert msg.strip() and "\n" not in msg, repr(msg)
        event(f"refused: {type(e).__name__}")
        return
    event("loaded")
    assert isinstance(corpus, Corpus) and corpus.train
    for pair in corpus.train + corpus.valid + corpus.test:
        assert pair.source_tokens and pair.target_tokens
        assert all(isinstance(t, str) and t for t in pair.source_tokens + pair.target_tokens)


file_char = st.characters(codec="utf-8")  # a UTF-8 file cannot hold lone surrogates
CELL_CHARS = st.one_of(st.sampled_from([*",\"\t\n\r\x00 <>&'\\;{}[]:", "😀", "\u202e", "\u0301"]), file_char)
WORDS = ["dog", "Hund", "runs", "😀", "<b>x</b>", "<script>alert(1)</script>", "שלום", "e\u0301", "x\x00y", "a,b"]
words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)  # rows that load
cells = st.one_of(
    words,
    words,
    st.text(CELL_CHARS, max_size=20),
    st.sampled_from([t for t in HOSTILE if "\ud800" not in t]),
    st.sampled_from(["a b", "c d", "NA", "null", "007", "1e3", "True", "", "a,b", '"', '""']),
)
column_names = st.sampled_from(["a", "b", "c", "", " a", "a.b", "<b>", '"a"', "a\tb"])


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[str], list[list[str]]]:
    """A header and rows of hostile cells; usually one cell per column, sometimes ragged."""
    header = draw(st.one_of(st.just(["a", "b"]), st.just(["b", "c", "a"]), st.lists(column_names, max_size=4)))
    width = st.integers(0, 4) if draw(st.integers(0, 4)) == 0 else st.just(len(header))
    rows = draw(st.lists(width.flatmap(lambda n: st.lists(cells, min_size=n, max_size=n)), max_size=10))
    return header, rows


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(CELL_CHARS, max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "x"]), inner, max_size=3),
    max_leaves=6,
)


def write_table(fmt: str, header: list[str], rows: list[list[str]], data: st.DataObject) -> tuple[str, bytes]:
    """Serialize a table as ``fmt``; returns the file suffix and the bytes."""
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator=data.draw(st.sampled_from(["\n", "\r\n"])))
        writer.writerows([header, *rows])
        return ".csv", out.getvalue().encode()
    if fmt == "csv-unquoted":
        return ".csv", "\n".join(",".join(r) for r in [header, *rows]).encode()
    if fmt == "tsv":
        return ".tsv", ("\n".join("\t".join(r) for r in [header, *rows]) + "\n").encode()
    if fmt == "jsonl":
        ascii_ = data.draw(st.booleans())
        lines = [json.dumps(dict(zip(header, r, strict=False)), ensure_ascii=ascii_) for r in rows]
        return ".jsonl", "\n".join(lines).encode()
    if fmt == "jsonl-values":
        records = data.draw(st.lists(json_values, max_size=8))
        return ".jsonl", "\n".join(json.dumps(r) for r in records).encode()
    # parquet: a well-formed table (pyarrow wants distinct column names and rows of one width)
    names = list(dict.fromkeys(header)) or ["a"]
    frame = pd.DataFrame([(r + [""] * len(names))[: len(names)] for r in rows], columns=names, dtype=str)
    out = io.BytesIO()
    frame.to_parquet(out)
    return ".parquet", out.getvalue()


@settings(max_examples=90, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tables(),
    st.sampled_from(["csv", "csv", "csv-unquoted", "tsv", "jsonl", "jsonl-values", "parquet"]),
    st.booleans(),
    st.sampled_from([("a", "b"), ("a", "b"), ("b", "a"), ("a", "a.b"), ("c", "b")]),
    st.sampled_from(["drop", "error"]),
    st.data(),
)
def test_load_generated_table(data_dir: Path, table, fmt: str, gz: bool, columns, empty: str, data) -> None:
    """Well-formed and malformed tables with hostile cells load, or fail with a one-line AttnvizError."""
    header, rows = table
    suffix, raw = write_table(fmt, header, rows, data)
    if gz and suffix != ".parquet":
        suffix, raw = suffix + ".gz", gzip.compress(raw)
    path = fresh(data_dir, suffix, raw)
    check_load(f"{path}?src={columns[0]}&tgt={columns[1]}", empty=empty)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(words, words, words), min_size=3, max_size=10, unique_by=lambda r: r[:2]),
    st.sampled_from([["a", "b"], ["b", "a"], ["c", "a", "b"]]),
    st.sampled_from(["csv", "tsv", "jsonl", "parquet"]),
    st.booleans(),
    st.data(),
)
def test_load_well_formed_table(data_dir: Path, rows, header: list[str], fmt: str, gz: bool, data) -> None:
    """A well-formed table of distinct pairs (emoji, HTML, RTL, NUL in the text) loads every pair as written."""
    cells = [[dict(zip("abc", r, strict=True))[name] for name in header] for r in rows]
    suffix, raw = write_table(fmt, header, cells, data)
    if gz and suffix != ".parquet":
        suffix, raw = suffix + ".gz", gzip.compress(raw)
    corpus = load_corpus(f"{fresh(data_dir, suffix, raw)}?src=a&tgt=b")
    pairs = corpus.train + corpus.valid + corpus.test
    assert sorted((p.source, p.target) for p in pairs) == sorted((a, b) for a, b, _ in rows)


PREFIXES = [b"", b"", b"a,b\n", b"a\tb\n", b'{"a": "x", "b": ', b"PAR1", b"\x1f\x8b\x08\x00", b"\xef\xbb\xbf"]
GOOD = b"a,b\n" + b"".join(f"x{i} y,z{i}\n".encode() for i in range(6))


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from([".csv", ".tsv", ".jsonl", ".json", ".parquet", ".csv.gz", ".jsonl.gz"]),
    st.sampled_from(PREFIXES),
    st.one_of(st.binary(max_size=300), st.text(CELL_CHARS, max_size=200).map(str.encode)),
    st.sampled_from([1, 1, 1, 50]),
)
@example(".csv", b"", b"", 1)
@example(".tsv", b"\n\n", b"", 1)
@example(".csv", b'"a,b\n', b"x", 140_000)  # an unclosed quote: a field above csv's size limit
@example(".csv", GOOD, b"\xff", 1)
@example(".csv", GOOD[:-1], b"\x00", 1)
@example(".csv.gz", gzip.compress(GOOD)[:-4], b"", 1)
@example(".parquet", b"PAR1", b"PAR1", 1)
@example(".jsonl", b"", b"null", 1)  # pyarrow segfaulted on a record that is null
@example(".jsonl", b'{"a": "x", "b": "y"}\n', b" null", 1)
@example(".json", b"\xef\xbb\xbf", b"[\nnull\n]", 1)
def test_load_garbage_bytes(data_dir: Path, suffix: str, prefix: bytes, garbage: bytes, repeat: int) -> None:
    """Random bytes (invalid UTF-8, broken gzip, fake Parquet, stray nulls) load or give a one-line DataError."""
    path = fresh(data_dir, suffix, prefix + garbage * repeat)
    check_load(f"{path}?src=a&tgt=b")


# -- plots -----------------------------------------------------------------------------------

plot_tokens = st.one_of(
    st.sampled_from(["<script>alert(1)</script>", "<b>x</b>", "<", ">", "&", "&lt;", "<br>", "<eos>", "", " ", "a b"]),
    st.text(file_char, max_size=12),  # real tokens never hold lone surrogates
)
ALLOWED_MARKUP = re.compile(r"<br>|</?extra>")  # what the builders write themselves


@st.composite
def alignments(draw: st.DrawFn, n_src: int | None = None, n_tgt: int | None = None) -> Alignment:
    """A valid alignment over hostile tokens; some scores are -inf (a local window) now and then."""
    source = draw(st.lists(plot_tokens, min_size=n_src or 1, max_size=n_src or 6))
    target = draw(st.lists(plot_tokens, min_size=n_tgt or 1, max_size=n_tgt or 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scores = rng.normal(size=(len(target), len(source)))  # [tgt, src]
    local = draw(st.booleans())
    if local:
        scores[:, 1:][rng.random((len(target), len(source) - 1)) < 0.3] = -np.inf
    weights = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    attn = rng.random((1, 2, len(source), len(source)))  # [layers, heads, src, src]
    return Alignment(
        source_tokens=source,
        target_tokens=target,
        weights=weights,
        scores=scores,
        contexts=rng.normal(size=(len(target), 4)),
        states=rng.normal(size=(len(target), 4)),
        source_unknown=draw(st.lists(st.booleans(), min_size=len(source), max_size=len(source))),
        score="local_p" if local else "additive",
        style="luong",
        positions=rng.random(len(target)) * len(source) if local else None,
        window=2 if local else None,
        encoder_attention=attn / attn.sum(axis=-1, keepdims=True),
    )


def strings(obj: object) -> Iterator[str]:
    """Every string inside a figure's JSON."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for value in obj.values():
            yield from strings(value)
    elif isinstance(obj, list | tuple | np.ndarray):
        for value in obj:
            yield from strings(value)


def check_escaped(fig) -> None:
    """No token markup reaches Plotly: only the builders' own ``<br>``/``<extra>`` tags remain."""
    figure = fig.to_plotly_json()
    figure["layout"].pop("template", None)  # Plotly's own theme, no token in it
    for text in strings(figure):
        assert "<script" not in text.lower()
        assert "<" not in ALLOWED_MARKUP.sub("", text), text


def shown(tokens: list[str]) -> list[str]:
    """Tokens as a reader sees them once Plotly unescapes the labels."""
    return [t.replace(" ", "␣") if t else "∅" for t in tokens]


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(alignments(), plot_tokens, st.booleans(), st.sampled_from(["weights", "scores"]), st.integers(0, 5))
def test_plots_escape_tokens(al: Alignment, title: str, hover: bool, values: str, step: int) -> None:
    """Tick labels and hovers of every ``plots`` figure show the tokens escaped, losslessly."""
    fig = plots.alignment_heatmap(al, values, show_gold=[(0, 0)], highlight_step=0, hover=hover, title=title or None)
    check_escaped(fig)
    assert [html.unescape(t) for t in fig.layout.xaxis.ticktext] == shown(al.source_tokens)
    assert [html.unescape(t) for t in fig.layout.yaxis.ticktext] == shown(al.target_tokens)
    check_escaped(plots.step_bar(al, step % len(al.target_tokens)))
    check_escaped(plots_context.context_heatmap(al))
    check_escaped(plots_context.context_projection(al))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), plot_tokens, plot_tokens)
def test_other_plot_modules_escape_tokens(data: st.DataObject, name_a: str, name_b: str) -> None:
    """Comparison, exploration and data figures escape tokens and user-given names too."""
    a = data.draw(alignments())
    b = data.draw(alignments(len(a.source_tokens), len(a.target_tokens)))
    b.source_tokens = a.source_tokens
    names = (name_a, name_b if name_b != name_a else name_a + "2")
    for fig in [
        plots_compare.compare_heatmaps({names[0]: a, names[1]: b}),
        plots_compare.difference_heatmap(a, b, names),
        plots_compare.entropy_plot({names[0]: a, names[1]: b}),
        plots_compare.js_plot(a, b, names),
        plots_compare.encoder_attention_heatmaps(a),
        plots_explore.explore_heatmap(a, title=name_a),
        plots_explore.context_bar(a, 0),
        plots_explore.step_animation(a),
        plots_data.gold_heatmap(a.source_tokens, a.target_tokens, [(0, 0)]),
    ]:
        check_escaped(fig)
    if html.escape(names[0], quote=False) != html.escape(names[1], quote=False):
        check_escaped(plots_explore.whatif_figure(a, b, [0], names))
