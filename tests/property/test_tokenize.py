"""Property-based fuzzing (hypothesis) of the tokenizers and ``clean_text`` on hostile text: tokens
are non-empty, free of control characters, deterministic, and round-trip through ``detokenize``.

Generated inputs per run (``max_examples``; the explicit ``@example`` cases come on top):
clean_text 2000, split 3000, detokenize round trip 2000, against the plain tokenizer 2000."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import example, given, settings
from hypothesis import strategies as st

from attnviz.data.tokenize import INVISIBLE, KINDS, Tokenizer, clean_text
from attnviz.data.vocab import EOS
from tests.support import tokenize_reference
from tests.support.hostile import hostile_text, long_text

TOKENIZERS = [Tokenizer(kind, lowercase) for kind in KINDS for lowercase in (True, False)]


def is_control(c: str) -> bool:
    return unicodedata.category(c) in ("Cc", "Cs")


def is_mark(c: str) -> bool:
    return unicodedata.category(c)[0] == "M"


def is_token(t: str) -> bool:
    """A word: letters/digits, each with its combining marks, joined by inner ' ’ - or zero-width
    (non-)joiners (and Hebrew's maqaf, geresh and gershayim); a flag: two regional indicators; anything
    else one character with its marks, skin tones and what zero-width joiners add."""
    if t[0].isalnum():
        inner = all(c.isalnum() or is_mark(c) or c in "'’-\u200c\u200d\u05be\u05f3\u05f4" for c in t)
        return inner and (t[-1].isalnum() or is_mark(t[-1]))
    if "\U0001f1e6" <= t[0] <= "\U0001f1ff":
        return len(t) == 2 and "\U0001f1e6" <= t[1] <= "\U0001f1ff"
    after_joiner = [t[i - 1] == "\u200d" for i in range(1, len(t))]
    return all(
        is_mark(c) or "\U0001f3fb" <= c <= "\U0001f3ff" or c == "\u200d" or joined
        for c, joined in zip(t[1:], after_joiner, strict=True)
    )


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
@example(Tokenizer("word"), "\ue000🏻 हिन्दी 👨\u200d👩 🇩🇪🇫 a-\u0301b")
@example(Tokenizer("char", lowercase=False), long_text("\x00"))
@example(Tokenizer("word"), "a\u200bb \u200f\u05d0\u05f4\u05d1 \u4e2d\u6587 \u00ad")
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
    if tok.kind == "word":  # the word cut skips invisible format characters: they only part words
        visible = re.sub(f"[{INVISIBLE}]", "", " ".join(visible)).split()
        assert all(not any(c.isspace() for c in t) for t in surface)
        assert "".join(surface) == "".join(visible)
        for t in surface:
            if len(t) > 1:
                assert is_token(t), t
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


@settings(max_examples=2000, deadline=None)
@given(st.sampled_from(TOKENIZERS), hostile_text)
@example(Tokenizer("word"), "\u0301a\x00\u0301 \ud800\u0301")
def test_the_compiled_path_cuts_as_the_plain_one(tok: Tokenizer, text: str) -> None:
    """``clean_text``'s one regular expression gives what a walk over every character gives."""
    assert clean_text(text) == tokenize_reference.clean_text(text)
    assert tok.tokenize(text) == tokenize_reference.tokenize(tok, text)
