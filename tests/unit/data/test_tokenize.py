"""The tokenizer: the compiled path against the plain one, subword pieces keeping the typed case, a
round trip through a dict."""

from __future__ import annotations

import re
import sys
import unicodedata

import pytest

from attnviz.data.bpe import BPE
from attnviz.data.marks import MARKS, UNICODE_VERSION
from attnviz.data.tokenize import _CONTROL_RE, KINDS, Tokenizer, clean_text
from attnviz.errors import CheckpointError, ConfigError
from tests.support import tokenize_reference
from tests.support.hostile import HOSTILE, long_text

TRICKY = [
    *HOSTILE,
    "\ufeffZwei Männer\r\nin\tblauen\x0bHemden\x0c.\x1c\x1d\x1e\x1f\x85",
    "a\u0301\u0327 A\u030a Å \u212b \uac00\u11a8 \u1100\u1161\u11a8 \u0958",  # compose, reorder, exclusions
    "\u0301leading mark \n\u0301after a newline \x00\u0301after NUL",
    "\ud83d\ude00 paired halves \udc00\ud800 reversed",
    "l'homme aujourd\u2019hui re-enter --x-- 'quoted' x- -y _under_score_ 3.14 1,000 ½ ² ⅷ",
    "Straße ǈ ǉ ΣΑΣ. ὈΔΥΣΣΕΎΣ İI ı ﬀ Ⅻ",
    "\x00\x01\x7f\x80\x9f\xa0\xad \u200b\u2060\ufeff\ufffe\U0010ffff",
    long_text("Ein Hund\x00rennt. "),
]


def test_the_control_class_is_every_control_and_surrogate_code_point_but_the_newline():
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    categories = map(unicodedata.category, every)
    expected = {c for c, category in enumerate(categories) if category in ("Cc", "Cs")} - {ord("\n")}
    assert {ord(c) for c in _CONTROL_RE.findall(every)} == expected


def test_the_mark_class_is_every_combining_mark():
    """Exactly Unicode 14's marks under Python 3.11; under a later Unicode (Python 3.12 and up), whose newer
    marks the generated class does not list, marks only and nearly all of them."""
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    expected = {c for c, category in enumerate(map(unicodedata.category, every)) if category[0] == "M"}
    found = {ord(c) for c in re.findall(f"[{MARKS}]", every)}
    if unicodedata.unidata_version == UNICODE_VERSION:
        assert found == expected
    else:
        assert found <= expected and len(found) > 0.9 * len(expected)


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("हिन्दी भाषा", ["हिन्दी", "भाषा"]),  # vowel signs and the virama stay in their word
        ("กั ที่", ["กั", "ที่"]),  # Thai vowels and tones above
        ("می\u200cخواهم", ["می\u200cخواهم"]),  # Persian's zero-width non-joiner is inside a word
        ("A 🏖️ dog 1️⃣", ["A", "🏖️", "dog", "1️⃣"]),  # a variation selector, a keycap
        ("👨\u200d👩\u200d👧 👍🏽 🇩🇪🇫🇷", ["👨\u200d👩\u200d👧", "👍🏽", "🇩🇪", "🇫🇷"]),  # sequences, tones, flags
        (
            "l'homme re-enter --x-- _a_ 3.14",
            ["l'homme", "re-enter", "-", "-", "x", "-", "-", "_", "a", "_", "3", ".", "14"],
        ),
    ],
)
def test_a_word_keeps_its_marks_and_an_emoji_its_sequence(text, tokens):
    assert Tokenizer(lowercase=False).split(text) == tokens


@pytest.mark.parametrize("text", TRICKY)
def test_the_compiled_path_cuts_as_the_plain_one(text):
    assert clean_text(text) == tokenize_reference.clean_text(text)
    bpe = BPE.learn(["the", "orange", "hat", "and", "the", "orange", "coat", "männer", "hemden"] * 3, 20)
    cuts = [Tokenizer(word_cut=cut) for cut in (1, 2)]
    for tokenizer in [
        *(Tokenizer(k, lowercase) for k in KINDS for lowercase in (True, False)),
        Tokenizer(bpe=bpe),
        *cuts,
    ]:
        assert tokenizer.tokenize(text) == tokenize_reference.tokenize(tokenizer, text)


@pytest.fixture
def subword_tokenizer() -> Tokenizer:
    words = ["the", "orange", "hat", "and", "the", "orange", "coat", "and", "the", "hats"] * 3
    return Tokenizer("word", lowercase=True, bpe=BPE.learn(words, 12))


def test_tokenizer_pieces_keep_the_typed_case(subword_tokenizer):
    text = "Orangefarbenen Hats, bitte!"
    surface, vocab_forms = subword_tokenizer.split(text), subword_tokenizer.tokenize(text)
    assert len(surface) == len(vocab_forms) > 4
    assert [subword_tokenizer.normalize(t) for t in surface] == vocab_forms
    assert subword_tokenizer.cut(text) == (surface, vocab_forms)
    assert Tokenizer().cut("Der Hut.") == (["Der", "Hut", "."], ["der", "hut", "."])
    assert "".join(t.removesuffix("@@") for t in surface) == "OrangefarbenenHats,bitte!"
    assert subword_tokenizer.detokenize(vocab_forms) == "orangefarbenen hats, bitte!"


def test_tokenizer_round_trips_through_a_dict(subword_tokenizer):
    saved = subword_tokenizer.to_dict()
    assert Tokenizer.from_dict(saved) == subword_tokenizer
    assert subword_tokenizer.describe() == {"kind": "word", "lowercase": True, "subword_merges": 12}
    assert "merges" not in Tokenizer().to_dict()
    with pytest.raises(CheckpointError, match="merges"):
        Tokenizer.from_dict({**saved, "merges": [["a"]]})
    with pytest.raises(ConfigError, match="word tokenizer"):
        Tokenizer("char", bpe=BPE([]))


@pytest.mark.parametrize(
    ("saved", "message"),
    [
        (None, "a saved tokenizer must be a JSON object {...}, got null"),
        ("word", 'a saved tokenizer must be a JSON object {...}, got "word"'),
        ({}, "the saved tokenizer lacks 'kind' and 'lowercase'"),
        ({"kind": "word"}, "the saved tokenizer lacks 'lowercase'"),
        ({"kind": "word", "lowercase": "yes"}, "the saved tokenizer's 'lowercase' must be true or false, got 'yes'"),
        (
            {"kind": "word", "lowercase": True, "word_cut": 9},
            "the saved tokenizer's 'word_cut' must be one of (1, 2, 3)",
        ),
        ({"kind": "word", "lowercase": True, "merges": 5}, "the saved tokenizer's 'merges' must be a list of [left"),
        ({"kind": "bpe", "lowercase": True}, "the saved tokenizer: unknown tokenizer kind 'bpe'; choose one of"),
    ],
)
def test_a_damaged_saved_tokenizer_names_the_field_in_words(saved, message):
    with pytest.raises(CheckpointError) as caught:
        Tokenizer.from_dict(saved)
    assert str(caught.value).startswith(message)
    assert "object has no attribute" not in str(caught.value) and "not iterable" not in str(caught.value)


def test_given_words_are_cut_inside_and_join_back(subword_tokenizer):
    from attnviz.data.bpe import join_pieces, word_spans
    from attnviz.errors import InputError

    words = ["Mr.", "Orangehats", "l'homme", "\x07", "!"]
    surface, forms = subword_tokenizer.cut_words(words)
    assert join_pieces(surface) == words  # each given word's tokens join back into it, never across words
    assert len({span for span in word_spans(surface)}) == len(words)
    first = surface.index(".") + 1  # "Mr." is the tokenizer's "mr" and "." (and pieces), inside the one word
    assert (
        join_pieces(surface[:first]) == ["Mr."]
        and forms[first - 1] == "."
        and join_pieces(forms[: first - 1]) == ["mr"]
    )
    assert forms[surface.index("\x07")] == "<unk>"  # a word the tokenizer keeps nothing of: <unk>, not an error
    with pytest.raises(InputError, match="ends with @@"):
        subword_tokenizer.cut_words(["orange@@", "hat"])
    with pytest.raises(InputError, match="reads characters"):
        Tokenizer("char").cut_words(["a"])


def test_forms_of_reads_back_the_vocabulary_forms_of_typed_and_given_words(subword_tokenizer):
    for tokenizer in (Tokenizer("word", lowercase=True), subword_tokenizer):
        for surface, forms in (
            tokenizer.cut("The orange hats, Mr. Coat"),
            tokenizer.cut_words(["The", "orange", "hats,", "Mr.", "Coat"]),  # "hats," and "Mr." are cut in two
        ):
            assert tokenizer.forms_of(surface) == forms
    surface, forms = subword_tokenizer.cut_words(["Mr.", "hats"])
    assert surface[:3] == ["M@@", "r@@", "."] and forms[:3] == ["m@@", "r", "."]  # only "M@@" is a piece
    assert Tokenizer("word", lowercase=True).forms_of(["Mr@@", "."]) == ["mr", "."]


def test_forms_of_keeps_a_decodes_own_pieces(subword_tokenizer):
    own = ["the", "o@@", "range", "hat"]  # pieces the model emitted, not the cut of "orange"
    assert subword_tokenizer.recut(own) is None
    assert subword_tokenizer.forms_of(own) == own
    assert subword_tokenizer.recut(["the", "hats"]) is None  # "hats" is two pieces merged for display


HINDI = "हिन्दी किताब"  # 'हिन्दी' is six code-point tokens in the older cut: its vowel signs and virama are marks


def test_a_tokenizer_saved_before_cuts_were_named_cuts_as_its_vocabulary_was_built():
    old_cut = Tokenizer(word_cut=1)
    assert old_cut.split(HINDI) == ["ह", "ि", "न", "्", "द", "ी", "क", "ि", "त", "ा", "ब"]
    assert Tokenizer().split(HINDI) == ["हिन्दी", "किताब"]
    assert Tokenizer(word_cut=1).split("a 🇩🇪 flag") == ["a", "🇩", "🇪", "flag"]
    unnamed = {"kind": "word", "lowercase": True}  # a checkpoint written before tokenizers named their cut
    assert Tokenizer.from_dict(unnamed, ["<pad>", "<unk>", "<bos>", "<eos>", "ह", "ि"]).word_cut == 1
    assert Tokenizer.from_dict(unnamed, ["<pad>", "<unk>", "<bos>", "<eos>", "🇩", "cat"]).word_cut == 1
    assert Tokenizer.from_dict(unnamed, ["<pad>", "<unk>", "<bos>", "<eos>", "हिन्दी", "cat"]).word_cut == 2
    assert Tokenizer.from_dict({"kind": "char", "lowercase": True}, ["ि"]).word_cut == 2  # characters are characters
    assert Tokenizer.from_dict(Tokenizer(word_cut=2).to_dict(), ["ि"]).word_cut == 2  # a named cut is taken as named
    assert Tokenizer.from_dict(Tokenizer().to_dict()).word_cut == 3  # a new tokenizer cuts the newest way
    for bad in (4, "1", True):
        with pytest.raises(CheckpointError, match="word_cut"):
            Tokenizer.from_dict({**unnamed, "word_cut": bad})


def test_an_older_subword_tokenizer_cuts_words_as_it_did_before_its_merges():
    """The older cut split a word at its marks before any merge (a mark is not a letter to it)."""
    old = Tokenizer.from_dict({"kind": "word", "lowercase": True, "merges": [["क", "ि@@"]]}, ["<pad>", "ि"])
    assert old.word_cut == 1 and Tokenizer.from_dict(old.to_dict()) == old
    assert old.split(HINDI) == ["ह", "ि", "न", "्", "द", "ी", "क", "ि", "त", "ा", "ब"]
    with pytest.raises(ConfigError, match="word cut"):
        Tokenizer(word_cut=0)


@pytest.mark.parametrize(
    ("text", "new", "before"),
    [
        ("这猫吃苹果。", ["这", "猫", "吃", "苹", "果", "。"], ["这猫吃苹果", "。"]),  # Chinese characters: a word each
        ("はしるねこ 漢字かな", ["はしるねこ", "漢", "字", "かな"], ["はしるねこ", "漢字かな"]),  # kana runs stay words
        (
            "ארה״ב ובית־הספר ג׳ירפה",
            ["ארה״ב", "ובית־הספר", "ג׳ירפה"],
            ["ארה", "״", "ב", "ובית", "־", "הספר", "ג", "׳", "ירפה"],
        ),
        ("\u200fחתול\u200f שחור", ["חתול", "שחור"], ["\u200f", "חתול", "\u200f", "שחור"]),  # direction marks
        (
            "a\u200bb \ufeffc d\u00ade \u2066f\u2069",
            ["a", "b", "c", "d", "e", "f"],
            None,
        ),  # zero-width, BOM, soft hyphen
        ("l'homme re-enter 🐈\u200d⬛ 🇫🇷 हिन्दी", ["l'homme", "re-enter", "🐈\u200d⬛", "🇫🇷", "हिन्दी"], "same"),
    ],
)
def test_cut_3_cuts_chinese_characters_joins_hebrew_words_and_skips_invisible_marks(text, new, before):
    """A new tokenizer cuts so; a checkpoint that recorded cut 2 goes on reading text as it was trained."""
    assert Tokenizer(lowercase=False).split(text) == new
    if before is not None:
        assert Tokenizer(lowercase=False, word_cut=2).split(text) == (new if before == "same" else before)


@pytest.mark.parametrize(
    ("tokens", "text"),
    [
        (["这", "猫", "吃", "苹", "果", "。"], "这猫吃苹果。"),
        (["He", "said", "「", "你好", "」", "."], "He said 「你好」."),
        (["الرجل", "يشرب", "ماء", "؟"], "الرجل يشرب ماء؟"),
        (["वह", "पानी", "पीता", "है", "।"], "वह पानी पीता है।"),
        (["a", "man", "(", "tall", ")", "."], "a man (tall)."),
        (["a", '"', "VAIO", '"', "laptop", "."], 'a "VAIO" laptop.'),  # quotes hug what they quote
        (['"', "Hi", '"', ",", "he", "said", '"', "go", '"'], '"Hi", he said "go"'),
        (["trägt", "\u201e", "Straßenkleidung", "\u201c", "."], "trägt \u201eStraßenkleidung\u201c."),
        (["said", "\u201c", "hi", "\u201d", "."], "said \u201chi\u201d."),
        (["a", '"', "b"], 'a "b'),  # one left open opens
    ],
)
def test_detokenize_attaches_the_punctuation_of_every_script(tokens, text):
    assert Tokenizer(lowercase=False).detokenize(tokens) == text
