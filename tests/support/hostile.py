"""Hostile text for the property tests: empty and whitespace-only text, 20,000 characters, control
characters and NUL, emoji, right-to-left and combining characters, lone surrogates, HTML/script and
only unknown words."""

from __future__ import annotations

from hypothesis import strategies as st

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


file_char = st.characters(codec="utf-8")  # a UTF-8 file cannot hold lone surrogates
