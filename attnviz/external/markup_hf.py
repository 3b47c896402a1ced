"""Markup carried by a Hugging Face model: the links of a chosen head's (or layer's, or the average)
cross-attention carry a marked-up sentence's markup into its translation (:mod:`attnviz.links.markup_carry`)."""

from __future__ import annotations

from attnviz.errors import InputError
from attnviz.external.heads import Pick, links_of, word_reading
from attnviz.external.hf import HFModel
from attnviz.links import DIRECTIONAL, MarkupResult, carry_markup, parse_markup


def hf_markup(
    model: HFModel,
    text: str,
    pick: Pick | None = None,
    method: str = "argmax",
    target: str | None = None,
    split: str = "hull",
    threshold: float = 0.3,
    source_lang: str | None = None,
    target_lang: str | None = None,
) -> MarkupResult:
    """Translate ``text``'s plain text with ``model`` (or force ``target``, a translation of your own) and
    carry its markup along the links ``method`` (one of :data:`~attnviz.links.DIRECTIONAL`) extracts from
    the attention ``pick`` chooses (by default every layer's and head's average). Words are the tokenizer's
    words (pieces joined at its word marker)."""
    if method not in DIRECTIONAL:
        raise InputError(f"a Hugging Face model's links come from {', '.join(DIRECTIONAL)}, not {method!r}")
    pick = pick or Pick()
    markup = parse_markup(text)
    if target is None:
        c = model.translate(markup.plain, source_lang=source_lang, target_lang=target_lang)
    else:
        c = model.force(markup.plain, target, source_lang, target_lang)
    reading = word_reading(c, pick)
    if not reading.target_words:
        raise InputError("the model translated the sentence to nothing; give a translation to carry the markup into")
    links = links_of(reading, method, threshold)
    translation = c.text if target is None else target
    return carry_markup(
        markup, reading.source_words, reading.target_words, links, translation, split, f"{method}, {pick.name}"
    )
