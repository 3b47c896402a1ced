"""The cached work behind Explore's Alignment view: attention's word links, eflomal's, a test split, markup
carried along either.

Each function is keyed by the model file and version (``path, mtime``), so a retrained model is
never answered from the cache; the work itself is attnviz's (extract, yardstick).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import streamlit as st

from attnviz.data import Link, Pair, load_corpus
from attnviz.evaluation import measured_on
from attnviz.links import (
    EFLOMAL_METHOD,
    CorpusAlignment,
    MarkupResult,
    Reading,
    WordAlignment,
    align_corpus,
    align_words,
    eflomal_links,
    training_sample,
    translate_markup,
    word_attention,
)
from attnviz.store import shareable_meta
from attnviz_app.app_pages.shared.common import load_model, session_id

if TYPE_CHECKING:
    from attnviz.decoding import Translator

Version = tuple[str, float]  # (path, mtime) of a checkpoint
Words = tuple[str, ...]


class Method(NamedTuple):
    """How attention's links are extracted (a tuple: a cache key)."""

    name: str  # one of attnviz.links.extract.METHODS
    threshold: float
    # for the symmetric methods, each shown model's reverse (the opposite direction's model of the same
    # score and style where there is one): (the shown model's path, the reverse's version, its name)
    reverses: tuple[tuple[str, Version, str], ...] = ()

    def _reverse(self, model: Version) -> tuple[Version, str] | tuple[None, None]:
        """``model``'s reverse: its version and name, or ``(None, None)``."""
        return next(((v, name) for path, v, name in self.reverses if path == model[0]), (None, None))

    def reverse_name(self, model: Version) -> str | None:
        """The name of ``model``'s reverse model, or None."""
        return self._reverse(model)[1]

    def reverse_of(self, model: Version) -> Translator | None:
        """``model``'s reverse model, loaded (a Translator), or None (a directional method, or none shipped)."""
        version = self._reverse(model)[0]
        return load_model(*version) if version else None


@st.cache_data(max_entries=128, show_spinner=False)
def word_links(
    model: Version, method: Method, source: str | Words, target: str | Words
) -> tuple[Reading, WordAlignment]:
    """The word-level attention of ``target`` forced through the model (``<eos>`` hidden, pieces merged)
    and the links ``method`` extracts from it. Each side is typed text or a tuple of given words (a gold
    set's: the model's tokens are merged back into them)."""
    translator = load_model(*model)
    reverse = method.reverse_of(model)
    source, target = (side if isinstance(side, str) else list(side) for side in (source, target))
    return word_attention(translator, source, target), align_words(
        translator, source, target, method.name, reverse, method.threshold
    )


@st.cache_data(max_entries=16, show_spinner=False)
def corpus_links(
    model: Version, method: Method, sources: tuple[Words, ...], targets: tuple[Words, ...]
) -> CorpusAlignment:
    """Attention's links for every pair of given words, with the pairs skipped (attnviz.links.extract.align_corpus)."""
    translator = load_model(*model)
    reverse = method.reverse_of(model)
    return align_corpus(
        translator, [list(s) for s in sources], [list(t) for t in targets], method.name, reverse, method.threshold
    )


def reads_characters(model: Version) -> bool:
    """Whether the model reads its source character by character (no words for eflomal or a gold file)."""
    return load_model(*model).src_tokenizer.kind == "char"


def data_of(model: Version) -> tuple[str, dict]:
    """The data spec and options the model was trained and measured on (attnviz.evaluation.evaluate.measured_on;
    words, not subword pieces)."""
    return measured_on(shareable_meta(load_model(*model).meta, session_id()))


@st.cache_data(max_entries=8, show_spinner=False)
def sample_of(spec: str, options: dict) -> list[tuple[list[str], list[str]]]:
    """eflomal's extra text for a data set (:func:`~attnviz.links.yardstick.training_sample`), once per data."""
    return training_sample(spec, options)


@st.cache_data(max_entries=8, show_spinner=False)
def test_split(spec: str, options: dict) -> list[Pair]:
    """A data set's test split (its gold links, where it has them)."""
    return load_corpus(spec, **options, split="test").test


@dataclass
class EflomalRun:
    links: list[list[Link]]  # one list per pair aligned
    seconds: float
    sample: int  # training pairs added
    spec: str


@st.cache_data(max_entries=64, show_spinner=False)
def eflomal_run(spec: str, options: dict, pairs: tuple[tuple[Words, Words], ...]) -> EflomalRun:
    """eflomal's links for ``pairs``, aligned together with a sample of ``spec``'s training pairs."""
    sample = sample_of(spec, options)
    start = time.perf_counter()
    links = eflomal_links([(list(s), list(t)) for s, t in pairs], sample)
    return EflomalRun(links, time.perf_counter() - start, len(sample), spec)


def eflomal_note(run: EflomalRun, what: str) -> str:
    """What eflomal was run on, for a caption (plain text: pass it through escape_markdown)."""
    return (
        f"eflomal ({EFLOMAL_METHOD}, one sampler, half the iterations) aligned {what} together with "
        f"{run.sample} training pairs of {run.spec} (words lowercased) in {run.seconds:.1f} s; its sampler is not "
        "seeded, so a rerun may move a link."
    )


@st.cache_data(max_entries=64, show_spinner=False)
def carried_markup(
    model: Version, method: Method, eflomal_data: tuple[str, dict] | None, text: str, target: str, split: str
) -> tuple[MarkupResult, Reading]:
    """``text``'s markup carried into the model's translation (or ``target`` when not empty) along the links of
    ``method``, or of eflomal with ``eflomal_data`` (the model's data spec and options) when given; with the
    word-level attention of that pair for the heatmap."""
    translator = load_model(*model)
    if eflomal_data is not None:
        sample = sample_of(*eflomal_data)
        result = translate_markup(translator, text, "eflomal", target=target or None, sample=sample, split=split)
    else:
        reverse = method.reverse_of(model)
        result = translate_markup(
            translator, text, method.name, reverse, target or None, split=split, threshold=method.threshold
        )
    return result, word_attention(translator, result.source_words, result.target_words)
