"""Carrying markup along word links: each rule of attnviz.links.markup_carry (target words, split,
unaligned, widened, crossing), the written translation (spaces, escaping, placeholders) and bad input."""

from __future__ import annotations

import pytest

from attnviz.errors import DataError, InputError
from attnviz.links import carry_markup, parse_markup
from attnviz.links.markup_carry import locate

SRC = "the black cat eats the apple ."
TGT = "le chat noir mange la pomme ."
DIAGONAL_SWAP = [(0, 0), (1, 2), (2, 1), (3, 3), (4, 4), (5, 5), (6, 6)]  # black cat -> chat noir


def carry(text: str, links, target: str = TGT, translation: str | None = None, **options):
    markup = parse_markup(text)
    words = markup.plain.split()
    return carry_markup(markup, words, target.split(), links, translation or target, **options)


def ranges(result) -> list[tuple[tuple[int, int], tuple[int, int], tuple[str, ...]]]:
    return [(s.source_words, s.target_words, s.flags) for s in result.spans]


def test_a_span_covers_the_target_words_its_source_words_link_to():
    r = carry("the <b>black</b> cat <i>eats</i> the apple .", DIAGONAL_SWAP)
    assert r.marked_translation == "le chat <b>noir</b> <i>mange</i> la pomme ."
    assert ranges(r) == [((1, 2), (2, 3), ()), ((3, 4), (3, 4), ())]
    assert r.plain_source == SRC and r.translation == TGT and r.spans[0].linked == (2,)
    data = r.to_dict()
    assert data["spans"][0] == {
        "element": "<b>",
        "kind": "tag",
        "name": "b",
        "attributes": "",
        "source_words": [1, 2],
        "target_words": [2, 3],
        "linked": [2],
        "flags": [],
    }


def test_reordered_words_stay_one_span_and_attributes_are_written_as_given():
    r = carry("the <a href='/cat?a=1&amp;b=2' class=\"x\">black cat</a> eats the apple .", DIAGONAL_SWAP)
    assert r.marked_translation == "le <a href='/cat?a=1&amp;b=2' class=\"x\">chat noir</a> mange la pomme ."


@pytest.mark.parametrize(("split", "expected"), [("hull", (2, 5)), ("block", (2, 3))])
def test_linked_words_that_are_not_contiguous_are_split_and_resolved_by_the_rule(split, expected):
    src, tgt = "the cat does not eat .", "le chat ne mange pas ."
    links = [(0, 0), (1, 1), (3, 2), (3, 4), (4, 3), (5, 5)]  # not -> ne ... pas
    r = carry("the cat does <b>not</b> eat .", links, tgt, split=split)
    assert r.plain_source == src and ranges(r) == [((3, 4), expected, ("split",))]
    assert r.split == split


def test_the_block_rule_keeps_the_largest_run_and_the_first_of_equals():
    links = [(1, 0), (1, 2), (1, 3), (2, 5), (2, 6)]
    r = carry("the <b>black cat</b> eats the apple .", links, split="block")
    assert r.spans[0].target_words == (2, 4)
    r = carry("the <b>black</b> cat eats the apple .", [(1, 1), (1, 4)], split="block")
    assert r.spans[0].target_words == (1, 2)


def test_an_unaligned_span_becomes_an_empty_element_next_to_its_nearest_linked_neighbour():
    links = [(0, 0), (2, 1), (3, 3), (4, 4), (5, 5), (6, 6)]  # "black" has no link
    r = carry("the <b>black</b> cat eats the apple .", links)
    assert ranges(r) == [((1, 2), (1, 1), ("unaligned",))]  # before "cat"'s target word, the following one
    assert r.marked_translation == "le <b></b>chat noir mange la pomme ."
    tail = [(0, 0), (1, 2), (2, 1), (3, 3)]  # nothing after "eats" is linked: after "mange"
    r = carry("the black cat eats the <i>apple</i> .", tail)
    assert ranges(r) == [((5, 6), (4, 4), ("unaligned",))]


def test_with_no_link_at_all_an_element_goes_to_the_same_relative_place():
    r = carry("the black cat <b>eats</b> the apple .", [])
    assert r.spans[0].target_words == (3, 3) and r.spans[0].flags == ("unaligned",)  # word 3 of 7 -> 3 of 7


def test_a_tag_inside_a_word_widens_to_the_whole_word():
    r = carry("the bl<b>ack</b> cat eats the apple .", DIAGONAL_SWAP)
    assert ranges(r) == [((1, 2), (2, 3), ("widened",))]
    assert r.marked_translation == "le chat <b>noir</b> mange la pomme ."


def test_void_elements_and_placeholders_keep_their_place_and_spacing():
    r = carry("the black cat eats the apple{x} .<br/>", DIAGONAL_SWAP, translation="le chat noir mange la pomme.")
    assert r.marked_translation == "le chat noir mange la pomme{x}.<br/>"  # no space before "." in the translation
    r = carry("he looks {x}.", [(0, 0), (1, 1), (2, 2)], "il regarde à .", "il regarde à.")
    assert r.marked_translation == "il regarde {x} à."  # between two spaced words: a word, not "{x}à"
    links = [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5)]
    r = carry("{who} eats the apple , said {name}.", links, "mange la pomme , dit .", "mange la pomme, dit.")
    assert r.marked_translation == "{who} mange la pomme, dit {name}."
    assert [s.target_words for s in r.spans] == [(0, 0), (5, 5)]


def test_a_child_stays_inside_its_parent():
    r = carry("<i>the <b>black</b></i> cat eats", [(0, 0), (2, 2), (3, 1)], "A B C")  # "black" has no link
    assert ranges(r) == [((0, 2), (0, 1), ()), ((1, 2), (1, 1), ("unaligned", "crossing"))]  # not before "C"
    assert r.marked_translation == "<i>A<b></b></i> B C"
    links = [(0, 0), (1, 1), (2, 3), (2, 4)]  # under the block rule the child's run lies outside the parent's
    r = carry("<i>the <b>black cat</b></i>", links, "A B C D E", split="block")
    assert ranges(r) == [((0, 3), (0, 2), ("split",)), ((1, 3), (2, 2), ("split", "crossing"))]
    assert r.marked_translation == "<i>A B<b></b></i> C D E"


def test_spans_that_cross_are_cut_to_the_part_outside_the_one_placed_first():
    r = carry("<b>the black</b> <i>cat eats</i>", [(0, 0), (1, 2), (2, 1), (3, 3)], "le chat noir mange")
    assert ranges(r) == [((0, 2), (0, 3), ("split",)), ((2, 4), (3, 4), ("split", "crossing"))]
    assert r.marked_translation == "<b>le chat noir</b> <i>mange</i>"
    r = carry("<b>the black</b> <i>cat eats</i>", [(0, 0), (1, 1), (2, 2), (3, 3)], "le chat noir mange")
    assert r.marked_translation == "<b>le chat</b> <i>noir mange</i>" and not any(s.flags for s in r.spans)


def test_identical_ranges_nest_in_source_order_and_empty_tags_hold_their_empty_children():
    r = carry("wo<b>rd</b><i>s</i> x", [(0, 0), (1, 1)], "mot x")
    assert r.marked_translation == "<b><i>mot</i></b> x" and [s.flags for s in r.spans] == [("widened",)] * 2
    r = carry("<a href='h'><b>cat</b></a> x", [(1, 0)], "a x")
    assert r.marked_translation == "<a href='h'><b></b></a>a x"


def test_the_translation_is_escaped_text_and_the_output_parses_back():
    r = carry("<b>fish</b> &amp; chips", [(0, 0), (1, 1), (2, 2)], "poisson & <frites>", "poisson & <frites>")
    assert r.plain_source == "fish & chips"
    assert r.marked_translation == "<b>poisson</b> &amp; &lt;frites&gt;"
    again = parse_markup(r.marked_translation)
    assert again.plain == "poisson & <frites>" and len(again.elements) == 1


def test_a_translation_that_does_not_hold_its_words_is_written_from_them():
    r = carry("the <b>cat</b>", [(0, 0), (1, 1)], "le chat", "something else")
    assert r.translation == "le chat" and r.marked_translation == "le <b>chat</b>"


def test_bad_input_says_what_to_fix():
    markup = parse_markup("the <b>cat</b>")
    with pytest.raises(InputError, match="split rule"):
        carry_markup(markup, ["the", "cat"], ["le", "chat"], [], split="middle")
    with pytest.raises(InputError, match="fall outside"):
        carry_markup(markup, ["the", "cat"], ["le", "chat"], [(0, 2)])
    with pytest.raises(InputError, match="translation is empty"):
        carry_markup(markup, ["the", "cat"], [], [])
    with pytest.raises(DataError, match="not in the source text"):
        carry_markup(markup, ["the", "dog"], ["le", "chat"], [])


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("<b>{x}</b> the cat sleeps .", "<b>{x}</b> le chat dort ."),
        ("the cat sleeps . <b>{x}</b>", "le chat dort . <b>{x}</b>"),
        ("the <b>{x}</b> cat sleeps .", "le <b>{x}</b> chat dort ."),
        ("the <b>{x} cat</b> sleeps .", "le <b>{x} chat</b> dort ."),
    ],
)
def test_a_placeholder_in_a_tag_is_spaced_as_without_it(text, want):
    diagonal = [(k, k) for k in range(4)]
    assert carry(text, diagonal, "le chat dort .").marked_translation == want


def test_the_words_are_written_as_the_translation_writes_them():
    r = carry("the <b>cat</b> sleeps", [(0, 0), (1, 1), (2, 2)], "le chat dort", "Le Chat dort")
    assert r.marked_translation == "Le <b>Chat</b> dort"


def test_a_word_lowercasing_lengthens_is_found_where_it_is():
    # "İ".lower() is two characters: the tokenizer's lowercased words still sit on the text's own
    markup = parse_markup("İİİİ is a <b>city</b> .")
    words = ["i̇i̇i̇i̇", "is", "a", "city", "."]
    r = carry_markup(markup, words, ["c'", "est", "une", "ville", "."], [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)])
    assert r.marked_translation == "c' est une <b>ville</b> ."
    assert r.spans[0].flags == ()  # not widened


def test_a_lowercased_word_ending_in_a_final_sigma_is_found_in_capitals():
    # "ΟΔΟΣ".lower() writes the final sigma ς, where the capital Σ alone lowercases to σ
    assert locate(["οδος", "και"], "ΟΔΟΣ ΚΑΙ") == [(0, 4), (5, 8)]


def test_the_first_place_a_word_is_is_taken_whatever_its_case():
    assert locate(["the", "dog", "saw", "the", "cat"], "The dog saw the cat") == [
        (0, 3),
        (4, 7),
        (8, 11),
        (12, 15),
        (16, 19),
    ]


def test_a_translation_holding_braces_reads_back_with_the_sources_elements_alone():
    target = "le chat voit {name} ."
    r = carry("the cat sees {name} .", [(0, 0), (1, 1), (2, 2), (3, 6)], target.replace("{name}", "{ name }"), target)
    assert r.marked_translation == "le chat voit &#123;name} {name} ."  # the translation's braces as text
    back = parse_markup(r.marked_translation)
    assert [e.opening for e in back.elements] == ["{name}"] and back.plain == "le chat voit {name} ."
