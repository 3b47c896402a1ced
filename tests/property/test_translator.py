"""Property-based fuzzing (hypothesis) of ``Translator.translate`` and ``align`` on the session
``trained`` model: hostile text gives a well-formed alignment or a one-line ``InputError``, nothing else.

Generated inputs per run (``max_examples``; the explicit ``@example`` cases come on top):
translate 1600, align 1000."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from attnviz.data.vocab import EOS
from attnviz.decoding.trace import Alignment
from attnviz.decoding.translator import MAX_INPUT_CHARS, Translator
from attnviz.errors import AttnvizError, InputError
from tests.support.hostile import hostile_text, long_text


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
        assert source_error(trained, source) or not 1 <= n_target <= 1000 or len(target) > MAX_INPUT_CHARS
        event("refused")
        return
    event("aligned")
    check_alignment(trained, al, source)
    assert al.target_tokens == [*trained.tgt_tokenizer.split(target), EOS]
