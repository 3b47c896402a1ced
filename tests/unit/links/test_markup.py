"""Parsing inline markup: the plain text the model reads, the elements with their offsets and written form,
and a clear DataError for every input that cannot be carried."""

from __future__ import annotations

import pytest

from attnviz.errors import AttnvizError, DataError
from attnviz.links import MAX_ELEMENTS, MAX_MARKUP_CHARS, parse_markup
from tests.support.hostile import HOSTILE


def spans(text: str) -> list[tuple[str, str]]:
    m = parse_markup(text)
    return [(el.label, m.plain[el.start : el.end]) for el in m.elements]


def test_tags_cover_their_text_and_keep_how_they_were_written():
    m = parse_markup('the <B>black</B> cat <a href="x>y" title=\'a "q"\'>eats</a>')
    assert m.plain == "the black cat eats"
    assert spans(m.source) == [("<b>", "black"), ("<a>", "eats")]
    b, a = m.elements
    assert (b.opening, b.closing, b.name) == ("<B>", "</B>", "b")  # names case-insensitive, written as given
    assert a.attributes == ' href="x>y" title=\'a "q"\'' and a.opening.startswith("<a href=")


def test_nesting_records_each_parent_and_void_elements_and_placeholders_sit_between_words():
    m = parse_markup("<i>a <b>b</b> c<br/></i> {name}!")
    assert m.plain == "a b c !"
    assert [(el.kind, el.parent) for el in m.elements] == [
        ("tag", None),
        ("tag", 0),
        ("void", 0),
        ("placeholder", None),
    ]
    br, ph = m.elements[2], m.elements[3]
    assert br.start == br.end == ph.start == ph.end == 5  # both between "c" and "!"
    assert (ph.name, ph.opening, ph.space_before, ph.space_after) == ("name", "{name}", True, False)
    assert m.ancestors(1) == {0} and m.ancestors(3) == set()


def test_placeholders_never_reach_the_model_and_separate_words():
    assert parse_markup("hello {user}").plain == "hello"
    assert parse_markup("a{x}b").plain == "a b"
    assert parse_markup("{a} {b} and {{c}} {not a name}").plain == "and {{c}} {not a name}"  # braces as text


def test_entities_are_decoded_for_the_model_and_literal_angles_stay_text():
    assert parse_markup("fish &amp; chips &lt;b&gt; &#233;t&eacute;").plain == "fish & chips <b> été"
    assert parse_markup("a < b and c > d, x<3").plain == "a < b and c > d, x<3"


def test_whitespace_runs_are_one_space_and_offsets_follow():
    m = parse_markup("  a \n\t <b> big </b>  dog  ")
    assert m.plain == "a big dog"
    assert [(label, text.strip()) for label, text in spans(m.source)] == [("<b>", "big")]


def test_a_tag_inside_a_word_keeps_its_characters():
    m = parse_markup("wo<b>rd</b> here")
    assert m.plain == "word here" and spans(m.source) == [("<b>", "rd")]  # widened to the word when carried


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("<script>alert(1)</script> hi", "<script>"),
        ("<div>x</div>", "not inline markup"),
        ("<img src=x onerror=alert(1)> hi", "<img>"),
        ("<b>a <i>b</b></i>", "does not close <i>"),
        ("<b>open", "never closed"),
        ("a</b>", "never opened"),
        ("<b/> a", "empty <b>"),
        ("a </br>", "has no closing tag; write <br/>"),
        ('<a href="unclosed>x</a>', "does not parse"),
        ("<b x", "does not parse"),
        ("a <!-- note --> b", "comments"),
        ("<?xml version='1.0'?> a", "comments"),
        ("", "empty"),
        ("   \n", "empty"),
        ("<b> </b><br/>{x}", "no words"),
        ("<b>x</b> " * (MAX_ELEMENTS + 1), "more than"),
        ("<b>" * 20 + "x" + "</b>" * 20, "nests more than"),
        ("<b>x</b>" * 1000, "characters long"),
        ("a" * 10_000, "characters long"),
    ],
)
def test_hostile_markup_is_a_data_error_that_says_what_to_change(text, says):
    with pytest.raises(DataError) as e:
        parse_markup(text)
    assert says in str(e.value)


def test_limits_hold_at_their_edge():
    assert len(parse_markup("a" * MAX_MARKUP_CHARS).plain) == MAX_MARKUP_CHARS
    assert len(parse_markup("<b>x</b> " * MAX_ELEMENTS).elements) == MAX_ELEMENTS


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_parses_or_is_an_attnviz_error(text):
    try:
        m = parse_markup(text)
    except AttnvizError:
        return
    assert m.plain == m.plain.strip() and "  " not in m.plain and "\x00" not in m.plain


def test_not_a_string_is_a_data_error():
    with pytest.raises(DataError, match="must be a string"):
        parse_markup(["<b>x</b>"])


def test_a_line_break_separates_words_and_a_break_opportunity_does_not():
    assert parse_markup("Line one<br/>line two").plain == "Line one line two"
    assert parse_markup("extra<wbr>ordinary").plain == "extraordinary"


@pytest.mark.parametrize(
    ("text", "before", "after"),
    [
        ("<b>{x}</b> cat", True, True),  # the text's start, a space after the tag
        ("the cat <b>{x}</b>", True, True),
        ("the <b>{x}</b>cat", True, False),
        ('a<a href="/x">{x}</a> b', False, True),
        ("a{x}b", False, False),
        ("one<br/>{x} two", False, True),  # a line break before it is no space
        ("{a}{b} c", False, True),  # the last one: another placeholder before it is no space
    ],
)
def test_a_placeholders_spacing_is_read_from_the_text_around_it_tags_aside(text, before, after):
    el = [e for e in parse_markup(text).elements if e.kind == "placeholder"][-1]
    assert (el.space_before, el.space_after) == (before, after)


@pytest.mark.parametrize("text", ["{0} items", "{año} here", "{{name}} text"])
def test_only_an_ascii_name_in_single_braces_is_a_placeholder(text):
    assert not parse_markup(text).elements
