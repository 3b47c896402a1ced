"""Word alignments extracted from attention: argmax, threshold, and bidirectional symmetrisation.

Links are ``(source_index, target_index)`` over *words* (subword pieces merged, ``<eos>``
hidden: :mod:`attnviz.links.reading`), 0-based, the order of Pharaoh ``i-j`` lines.

* ``argmax``: each target word linked to the source word it attends to most.
* ``threshold``: every (source, target) word pair whose weight reaches the threshold.
* ``dtw``: Whisper's recipe, a monotonic path by dynamic time warping through the standardised,
  median-filtered matrix (:mod:`attnviz.links.dtw`).
* ``intersection``, ``union``, ``grow-diag``, ``grow-diag-final``, ``grow-diag-final-and``:
  the argmax links of a model and of the *reverse* model (target -> source, forced through the
  source) combined as in Koehn, Och & Marcu (2003) and Moses' ``symal``: start from the
  intersection, grow into neighbouring union links (diagonals included) that align a word not
  yet aligned, then add the remaining directional links whose source *or* (``-and``: *and*)
  target word is still unaligned.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from attnviz.data import EOS, Link, to_pharaoh
from attnviz.decoding import Alignment, Translator, argmax_links
from attnviz.errors import DataError, InputError
from attnviz.links.dtw import dtw_links
from attnviz.links.reading import Reading, read

DIRECTIONAL = ("argmax", "threshold", "dtw")
SYMMETRIC = ("intersection", "union", "grow-diag", "grow-diag-final", "grow-diag-final-and")
METHODS = DIRECTIONAL + SYMMETRIC
CORPUS_CHUNK = 1024  # pairs align_corpus forces and reduces to links at a time: its memory stays bounded
Text = str | list[str]  # typed text, or a sentence given as words
# (source, target) steps in symal's order, which lists them as (target, source): (-1, 0), (0, -1), (1, 0), ...
_NEIGHBOURS = ((0, -1), (-1, 0), (0, 1), (1, 0), (-1, -1), (1, -1), (-1, 1), (1, 1))


def threshold_links(weights: np.ndarray, threshold: float) -> set[Link]:
    """Every (source, target) cell whose weight is at least ``threshold`` (in (0, 1])."""
    if not 0 < threshold <= 1:
        raise InputError(f"the threshold must be in (0, 1], got {threshold}; 0.3 is a common choice")
    tgt, src = np.nonzero(np.asarray(weights) >= threshold)  # [links] each
    return {(int(s), int(t)) for s, t in zip(src, tgt, strict=True)}


def transpose(links: Iterable[Link]) -> set[Link]:
    """Links of the reverse direction, ``(target, source)`` -> ``(source, target)``."""
    return {(j, i) for i, j in links}


def symmetrise(forward: Iterable[Link], backward: Iterable[Link], method: str) -> set[Link]:
    """Combine two directional alignments given in the same ``(source, target)`` orientation.

    ``method`` is one of :data:`SYMMETRIC`; ``grow-diag*`` follow Koehn's pseudo-code as Moses'
    ``symal`` runs it: target (Koehn's English) then source positions in increasing order, so the
    result is deterministic and equal to symal's.
    """
    fwd, bwd = set(forward), set(backward)
    if method == "intersection":
        return fwd & bwd
    if method == "union":
        return fwd | bwd
    if method not in SYMMETRIC:
        raise InputError(f"unknown symmetrisation {method!r}; choose one of {', '.join(SYMMETRIC)}")
    union = fwd | bwd
    links = fwd & bwd
    src_done = {i for i, _ in links}
    tgt_done = {j for _, j in links}

    def add(i: int, j: int) -> None:
        links.add((i, j))
        src_done.add(i)
        tgt_done.add(j)

    n_src = 1 + max((i for i, _ in union), default=-1)
    n_tgt = 1 + max((j for _, j in union), default=-1)
    grown = True
    while grown:
        grown = False
        for j in range(n_tgt):
            for i in range(n_src):
                if (i, j) not in links:
                    continue
                for di, dj in _NEIGHBOURS:
                    new = (i + di, j + dj)
                    if new in union and new not in links and (new[0] not in src_done or new[1] not in tgt_done):
                        add(*new)
                        grown = True
    if method == "grow-diag":
        return links
    both = method == "grow-diag-final-and"
    for directional in (fwd, bwd):
        for i, j in sorted(directional - links, key=lambda link: (link[1], link[0])):
            free_src, free_tgt = i not in src_done, j not in tgt_done
            if (free_src and free_tgt) if both else (free_src or free_tgt):
                add(i, j)
    return links


@dataclass
class WordAlignment:
    """Word links extracted from attention, with the words they index."""

    source_words: list[str]
    target_words: list[str]
    links: list[Link]  # sorted (source_index, target_index)
    method: str
    caption: str  # how the word-level matrix was read (see attnviz.links.reading)

    def to_pharaoh(self) -> str:
        return to_pharaoh(self.links)

    def to_dict(self) -> dict:
        return {
            "method": self.method,
            "source_words": self.source_words,
            "target_words": self.target_words,
            "links": [list(link) for link in self.links],
            "pharaoh": self.to_pharaoh(),
            "caption": self.caption,
        }


def directional_links(weights: np.ndarray, method: str, threshold: float = 0.3) -> set[Link]:
    """The links one direction's ``[tgt, src]`` word matrix gives by ``method``, one of :data:`DIRECTIONAL`;
    ``dtw`` also takes a ``[heads, tgt, src]`` stack (Whisper's alignment heads)."""
    if method == "argmax":
        return argmax_links(weights)
    if method == "threshold":
        return threshold_links(weights, threshold)
    if method == "dtw":
        return dtw_links(weights)
    raise InputError(f"{method!r} is not a one-direction method; choose one of {', '.join(DIRECTIONAL)}")


def read_words(al: Alignment) -> Reading:
    """An alignment's weights read as words (pieces merged, the source's ``<eos>`` column hidden where it has
    one), without the ``<eos>`` row."""
    reading = read(al.weights, al.source_tokens, al.target_tokens, hide=al.source_tokens[-1:] == [EOS])
    if reading.target_words[-1:] == [EOS]:
        reading.weights = reading.weights[:-1]
        reading.target_words = reading.target_words[:-1]
    return reading


def word_attention(translator: Translator, source: Text, target: Text) -> Reading:
    """Forced decoding of ``target``, read as words: a :class:`~attnviz.links.reading.Reading`
    without the ``<eos>`` row. Each side is typed text (the model's tokenizer finds the words) or a
    list of given words (each cut by the model on its own, its tokens merged back into it)."""
    return read_words(translator.align(source, target))


def word_attentions(translator: Translator, sources: list[Text], targets: list[Text]) -> list[Reading]:
    """:func:`word_attention` of every pair, forced in batches (:meth:`Translator.align_batch`), in
    order; a pair the model cannot read raises :class:`InputError` naming it."""
    return [read_words(al) for al in translator.align_batch(sources, targets, log_probs=False)]


_LANGUAGE_PAIR = re.compile(r"^(?P<stem>.+-)(?P<src>[a-z]{2,3})-(?P<tgt>[a-z]{2,3})$")


def reverse_task(task: str) -> str | None:
    """The task of the opposite direction, ``"multi30k-en-de"`` for ``"multi30k-de-en"``; ``None``
    for a task whose name ends in no language pair (``"toy-fr"``, ``"dates"``)."""
    m = _LANGUAGE_PAIR.match(task or "")
    return f"{m['stem']}{m['tgt']}-{m['src']}" if m else None


def check_reverse(translator: Translator, reverse: Translator) -> None:
    """Refuse a ``reverse`` model that is not of the opposite direction to ``translator``: another
    language pair (by their tasks' names, where both name one), or the same direction (the model's
    own source and target vocabularies, where those two differ: the model itself, or a sibling)."""
    task, other = translator.meta.get("task") or "", reverse.meta.get("task") or ""
    wanted = reverse_task(task)
    if wanted and reverse_task(other) and other != wanted:
        raise InputError(
            f"the reverse model translates {other}; the symmetric methods need one of the opposite direction "
            f"to the model's {task}: a {wanted} model"
        )
    source, target = translator.src_vocab.itos, translator.tgt_vocab.itos
    if source != target and (reverse.src_vocab.itos, reverse.tgt_vocab.itos) == (source, target):
        raise InputError(
            "the reverse model reads the model's own direction (the same source and target vocabularies); "
            "the symmetric methods need a model of the opposite direction"
        )


def _check_method(method: str, reverse: Translator | None, translator: Translator) -> None:
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    if method in SYMMETRIC and reverse is None:
        wanted = reverse_task(translator.meta.get("task") or "")
        model = f"a {wanted} model" if wanted else "a model of the opposite direction"
        raise InputError(
            f"{method} combines both directions; give {model}"
            " as the reverse model (reverse=attnviz.load(NAME) in Python, --reverse-model NAME on the command line), "
            "or use the argmax method"
        )
    if method in SYMMETRIC:
        if not isinstance(reverse, Translator):
            raise InputError(f"reverse must be a loaded model (attnviz.load(name)), got {type(reverse).__name__}")
        check_reverse(translator, reverse)


def _word_alignment(fwd: Reading, bwd: Reading | None, method: str, threshold: float) -> WordAlignment:
    """The links ``method`` extracts from the forward reading, and for a symmetric method from the
    reverse one ``bwd`` (rows: source words, columns: target words)."""
    if bwd is None:
        links = directional_links(fwd.weights, method, threshold)
    else:
        shapes = (len(fwd.source_words), len(fwd.target_words)), (len(bwd.target_words), len(bwd.source_words))
        if shapes[0] != shapes[1]:
            raise InputError(
                f"the two models cut the sentences into different words ({shapes[0][0]}x{shapes[0][1]} vs "
                f"{shapes[1][0]}x{shapes[1][1]} source x target); pick a reverse model with the same tokenizer kind"
            )
        links = symmetrise(argmax_links(fwd.weights), transpose(argmax_links(bwd.weights)), method)
    return WordAlignment(fwd.source_words, fwd.target_words, sorted(links), method, fwd.caption)


def align_words(
    translator: Translator,
    source: Text,
    target: Text,
    method: str = "argmax",
    reverse: Translator | None = None,
    threshold: float = 0.3,
) -> WordAlignment:
    """Word links between ``source`` and ``target`` from the model's attention.

    Each side is typed text or a list of given words (:func:`word_attention`). Symmetric methods
    also need ``reverse``, a model of the opposite direction (for a de-en model an en-de one),
    forced through ``source`` given ``target``; both must cut the sentences into the same words
    (given words always are).
    """
    _check_method(method, reverse, translator)
    fwd = word_attention(translator, source, target)
    bwd = None if method in DIRECTIONAL else word_attention(reverse, target, source)
    return _word_alignment(fwd, bwd, method, threshold)


@dataclass
class CorpusAlignment:
    """Attention's word links for a corpus of given words, with the pairs the model could not read."""

    links: list[list[Link] | None]  # per pair; None where skipped
    skipped: dict[int, str]  # pair index (0-based) -> why the model could not align it
    unknown: list[tuple[int, int]]  # per pair: source and target words the model reads <unk> in

    @property
    def aligned(self) -> int:
        return len(self.links) - len(self.skipped)

    def __repr__(self) -> str:  # a line a notebook can show: the links of every pair are read as an attribute
        links = sum(len(x) for x in self.links if x)
        return f"CorpusAlignment({len(self.links)} pairs, {self.aligned} aligned, {links} links)"

    def with_unknown(self) -> list[int]:
        """The pairs (0-based) that hold a word the model reads ``<unk>`` in."""
        return [k for k, (s, t) in enumerate(self.unknown) if s or t]


def align_corpus(
    translator: Translator,
    sources: list[list[str]],
    targets: list[list[str]],
    method: str = "argmax",
    reverse: Translator | None = None,
    threshold: float = 0.3,
    progress: Callable[[int], None] | None = None,
) -> CorpusAlignment:
    """Word links for every pair of given words (pre-tokenized sentences, as gold files index them).

    Each space-separated token is a word: the model's tokenizer and subword pieces apply inside it
    and are merged back, so the links index the given words. A word the model cannot read is
    ``<unk>`` inside its sentence; a pair the model cannot take (too long for it) is skipped, with
    the reason in :attr:`CorpusAlignment.skipped`. An empty sentence raises :class:`DataError`. The
    links are those :func:`align_words` gives each pair; the pairs are forced in batches
    (:meth:`Translator.align_batch`), both directions for a symmetric method. ``progress(n)``, where
    given, is called with the number of pairs of each batch once they are links (a progress bar).
    """
    if len(sources) != len(targets):
        raise DataError(
            f"{len(sources)} source but {len(targets)} target sentences; the files must hold one pair per line"
        )
    for k, (src, tgt) in enumerate(zip(sources, targets, strict=True)):
        if isinstance(src, str) or isinstance(tgt, str):
            raise DataError(
                f"pair {k + 1} is text; align_corpus takes each sentence as a list of its words "
                "(line.split()), and align_words takes text"
            )
        if not src or not tgt:
            raise DataError(f"line {k + 1}: an empty sentence; remove the pair from both files (and from the gold)")
    _check_method(method, reverse, translator)
    unknown = [
        (sum(translator.unknown_words(src)), sum(translator.unknown_words(tgt, "target")))
        for src, tgt in zip(sources, targets, strict=True)
    ]
    skipped: dict[int, str] = {}
    links: list[list[Link] | None] = []
    for start in range(0, len(sources), CORPUS_CHUNK):  # a chunk's attention is dropped once it is links
        chunk = range(start, min(start + CORPUS_CHUNK, len(sources)))
        fwd = _readings(translator, sources, targets, chunk, skipped)
        bwd = _readings(reverse, targets, sources, list(fwd), skipped) if method in SYMMETRIC else {}
        links += _chunk_links(sources, targets, chunk, (fwd, bwd), method, threshold, skipped)
        if progress is not None:
            progress(len(chunk))
    return CorpusAlignment(links, dict(sorted(skipped.items())), unknown)


def _chunk_links(
    sources: list[list[str]],
    targets: list[list[str]],
    chunk: range,
    readings: tuple[dict[int, Reading], dict[int, Reading]],  # forward, and backward for a symmetric method
    method: str,
    threshold: float,
    skipped: dict[int, str],
) -> list[list[Link] | None]:
    """The links of the pairs numbered ``chunk`` (None for a pair skipped, with its reason in ``skipped``)."""
    fwd, bwd = readings
    links: list[list[Link] | None] = []
    for k in chunk:
        src, tgt = sources[k], targets[k]
        if k in skipped:
            links.append(None)
            continue
        try:
            wa = _word_alignment(fwd[k], bwd.get(k), method, threshold)
        except InputError as e:
            skipped[k] = str(e)
            links.append(None)
            continue
        if (len(wa.source_words), len(wa.target_words)) != (len(src), len(tgt)):
            skipped[k] = (
                f"the model read {len(wa.source_words)} source and {len(wa.target_words)} target words where the "
                f"pair has {len(src)} and {len(tgt)}"
            )
            links.append(None)
            continue
        links.append(wa.links)
    return links


def _readings(
    translator: Translator,
    sources: list[list[str]],
    targets: list[list[str]],
    pairs: Iterable[int],
    skipped: dict[int, str],
) -> dict[int, Reading]:
    """The word readings of the pairs numbered ``pairs`` that the model can read, forced in batches;
    why it cannot read each of the others goes into ``skipped``."""
    checked = {}
    for k in pairs:
        try:
            checked[k] = translator.source(list(sources[k])), translator.target(list(targets[k]))
        except InputError as e:
            skipped[k] = str(e)
    alignments = translator.align_batch(
        [s for s, _ in checked.values()], [t for _, t in checked.values()], log_probs=False
    )
    return {k: read_words(al) for k, al in zip(checked, alignments, strict=True)}
