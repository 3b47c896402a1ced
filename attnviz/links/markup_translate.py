"""Markup carried by a model: translate a marked-up sentence's plain text, link its words by a chosen
method and carry the markup along the links (:mod:`attnviz.links.markup_carry`)."""

from __future__ import annotations

from collections.abc import Sequence

from attnviz.data import Tokenizer, join_pieces
from attnviz.decoding import Translator
from attnviz.errors import InputError
from attnviz.evaluation import measured_on
from attnviz.links.extract import METHODS, align_words
from attnviz.links.markup import parse_markup
from attnviz.links.markup_carry import MarkupResult, carry_markup
from attnviz.links.yardstick import eflomal_links, training_sample

MARKUP_METHODS = (*METHODS, "eflomal")
Sample = list[tuple[list[str], list[str]]]


def words_of(tokenizer: Tokenizer, text: str) -> list[str]:
    """The words a word tokenizer reads in ``text``, subword pieces joined, as written."""
    return join_pieces(tokenizer.split(text))


def eflomal_sample(translator: Translator) -> Sample:
    """:func:`~attnviz.links.yardstick.training_sample` of the model's own data: the text eflomal learns
    from beside the sentence it aligns."""
    return training_sample(*measured_on(translator.meta))


def translate_markup(
    translator: Translator,
    text: str,
    method: str = "argmax",
    reverse: Translator | None = None,
    target: str | None = None,
    sample: Sequence[tuple[Sequence[str], Sequence[str]]] = (),
    split: str = "hull",
    threshold: float = 0.3,
    beam_size: int = 1,
) -> MarkupResult:
    """Translate ``text`` (inline markup and placeholders, :func:`~attnviz.links.markup.parse_markup`) and
    carry its markup into the translation, or into ``target`` when given (a translation of your own).

    ``method`` is one of :data:`MARKUP_METHODS`: the attention methods of
    :func:`~attnviz.links.extract.align_words` (the symmetric ones need ``reverse``, the opposite
    direction's model), or ``"eflomal"``, whose links come from eflomal trained on ``sample`` (e.g.
    :func:`eflomal_sample`) plus this pair. Words are the model's words (pieces joined), so the model
    must read words, not characters."""
    if method not in MARKUP_METHODS:
        raise InputError(f"unknown method {method!r}; choose one of {', '.join(MARKUP_METHODS)}")
    if translator.src_tokenizer.kind != "word" or translator.tgt_tokenizer.kind != "word":
        raise InputError("this model reads characters; markup is carried over words, so pick a model that reads words")
    markup = parse_markup(text)
    source_words = words_of(translator.src_tokenizer, markup.plain)
    if target is None:
        al = translator.translate(markup.plain, beam_size=beam_size)
        translation, target_words = translator.text_of(al), join_pieces(al.display_tokens())
        if not target_words:
            raise InputError(
                "the model translated the sentence to nothing; give a translation to carry the markup into"
            )
    else:
        translation, target_words = target, words_of(translator.tgt_tokenizer, target)
        if not target_words:
            raise InputError("the translation given is empty; type one, or leave it out to use the model's own")
    if method == "eflomal":
        links = eflomal_links([(source_words, target_words)], list(sample))[0]
    else:
        links = align_words(translator, source_words, target_words, method, reverse, threshold).links
    return carry_markup(markup, source_words, target_words, links, translation, split, method)
