"""Markup carried by a Hugging Face model: the links of a chosen head's (or layer's, or the average)
cross-attention carry a marked-up sentence's markup into its translation (:mod:`attnviz.links.markup_carry`)."""

from __future__ import annotations

from attnviz.errors import InputError
from attnviz.external.heads import Pick, links_of, word_reading
from attnviz.external.hf import HFModel
from attnviz.external.trace import CrossAttention
from attnviz.links import DIRECTIONAL, Markup, MarkupResult, Reading, carry_markup, parse_markup


def _check(method: str) -> None:
    if method not in DIRECTIONAL:
        raise InputError(f"a Hugging Face model's links come from {', '.join(DIRECTIONAL)}, not {method!r}")


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
    _check(method)
    markup = parse_markup(text)
    if target is None:
        c = model.translate(markup.plain, source_lang=source_lang, target_lang=target_lang)
    else:
        c = model.force(markup.plain, target, source_lang, target_lang)
    result, _ = carry_through(c, markup, pick, method, split, threshold, c.text if target is None else target)
    return result


def carry_through(
    c: CrossAttention,
    markup: Markup,
    pick: Pick | None = None,
    method: str = "argmax",
    split: str = "hull",
    threshold: float = 0.3,
    translation: str | None = None,
) -> tuple[MarkupResult, Reading]:
    """``markup`` carried into the decode ``c`` of its plain text (``translation``: the translation's text,
    by default the decode's) along the links ``method`` extracts from the attention ``pick`` chooses; with
    that attention read as words, for the figure."""
    _check(method)
    pick = pick or Pick()
    reading = word_reading(c, pick)
    if not reading.target_words:
        raise InputError("the model translated the sentence to nothing; give a translation to carry the markup into")
    links = links_of(reading, method, threshold)
    label = f"{method}, {pick.name}"
    result = carry_markup(
        markup, reading.source_words, reading.target_words, links, translation or c.text, split, label
    )
    return result, reading
