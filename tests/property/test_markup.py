"""Property-based checks (hypothesis) of carrying markup: for random well-nested markup (tags, empty tags,
``<br/>``, placeholders, tags inside words), random target words and random links, the marked-up translation
parses back as markup, holds every element once, and reads as the translation.

Generated inputs per run: 300 (``max_examples``)."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from attnviz.links import FLAGS, carry_markup, parse_markup

SOURCE_WORDS = ["the", "cat", "eats", "a", "big", "apple", ",", "."]
TARGET_WORDS = ["le", "chat", "mange", "une", "pomme", "a&b", "<c>", "x>y", ".", ","]
TAGS = ["<b>", "<i>", "<a href='x?a=1&amp;b=2'>", '<span class="q>">']


def _segment(rng: random.Random, words: list[str], depth: int) -> str:
    parts, i = [], 0
    while i < len(words):
        roll = rng.random()
        if roll < 0.08:
            parts.append("<br/>")
        elif roll < 0.16:
            parts.append(f"{{p{rng.randint(0, 9)}}}")
        if depth < 4 and rng.random() < 0.35:
            j = rng.randint(i, len(words))
            tag = rng.choice(TAGS)
            name = tag[1:].split()[0].rstrip(">")
            parts.append(f"{tag}{_segment(rng, words[i:j], depth + 1)}</{name}>")  # j == i: an empty tag
            i = j
        else:
            parts.append(words[i])
            i += 1
    return "".join(p + rng.choice([" ", " ", " ", ""]) for p in parts)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_carried_markup_is_well_nested_and_keeps_every_element(seed):
    rng = random.Random(seed)
    words = [rng.choice(SOURCE_WORDS) for _ in range(rng.randint(1, 8))]
    markup = parse_markup(_segment(rng, words, 0) + " " + words[-1])
    source = markup.plain.split()
    target = [rng.choice(TARGET_WORDS) for _ in range(rng.randint(1, 8))]
    links = {(rng.randrange(len(source)), rng.randrange(len(target))) for _ in range(rng.randint(0, 12))}
    split = rng.choice(["hull", "block"])
    result = carry_markup(markup, source, target, links, " ".join(target), split)
    again = parse_markup(result.marked_translation)
    assert again.plain == " ".join(target)
    assert Counter(el.opening for el in again.elements) == Counter(el.opening for el in markup.elements)
    for span in result.spans:
        start, end = span.target_words
        assert 0 <= start <= end <= len(target) and set(span.flags) <= set(FLAGS)
        if span.element.kind != "tag" or "crossing" in span.flags:
            continue
        if span.linked and "split" not in span.flags:
            assert (start, end) == (span.linked[0], span.linked[-1] + 1)
