"""Which heads align: word links of a Hugging Face model's cross-attention, for one pair or a corpus,
scored against gold for every head at once (the search for Whisper's "alignment heads").

A choice of attention is a :class:`Pick`: one head, one layer's heads averaged, everything
averaged, or a set of heads averaged. Links come from the attnviz extraction methods
(:data:`attnviz.links.DIRECTIONAL`: argmax, threshold, dtw) on the words (``<eos>`` hidden, pieces
merged), so they compare with the links of attnviz's own models and of eflomal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnviz.data import Link
from attnviz.decoding import Alignment
from attnviz.errors import DataError, InputError
from attnviz.external.hf import HFModel
from attnviz.external.trace import STYLE, CrossAttention
from attnviz.links import (
    DIRECTIONAL,
    GoldAlignment,
    Reading,
    directional_links,
    merge_groups,
    read_words,
    score_links,
    word_groups,
)


@dataclass(frozen=True)
class Pick:
    """A choice of cross-attention: ``heads`` (``(layer, head)`` pairs) averaged when given, else
    ``layer``/``head`` as :meth:`CrossAttention.alignment` takes them."""

    layer: int | None = None
    head: int | None = None
    heads: tuple[tuple[int, int], ...] = ()

    @property
    def name(self) -> str:
        if self.heads:
            return "heads " + " ".join(f"{layer}:{head}" for layer, head in self.heads)
        if self.layer is None:
            return "all layers and heads"
        return f"layer {self.layer}" + ("" if self.head is None else f", head {self.head}")


def parse_heads(text: str) -> tuple[tuple[int, int], ...]:
    """``"3:1 4:0"`` or ``"3:1,4:0"`` as ``((3, 1), (4, 0))``: layer:head pairs, 0-based."""
    pairs = []
    for item in text.replace(",", " ").split():
        layer, sep, head = item.partition(":")
        if not sep or not layer.isdigit() or not head.isdigit():
            raise InputError(f"{item!r} is not a layer:head pair; write heads as 3:1 4:0 (0-based)")
        pairs.append((int(layer), int(head)))
    if not pairs:
        raise InputError("no heads given; write them as layer:head pairs, e.g. 3:1 4:0")
    return tuple(pairs)


def word_reading(c: CrossAttention, pick: Pick) -> Reading:
    """The chosen attention read as words, ``<eos>`` column hidden and the ``<eos>`` row left out. Only the
    weights are folded (not the contexts and the rest of a full ``Alignment``): this runs for every head."""
    weights = c.weights_of(pieces_of(c, pick))  # [tgt, src]
    empty = np.zeros((len(weights), 0))
    return read_words(
        Alignment(
            c.source_tokens,
            c.target_tokens,
            weights,
            weights,
            empty,
            empty,
            [False] * len(c.source_tokens),
            c.model_type,
            STYLE,
        )
    )


def links_of(reading: Reading, method: str = "argmax", threshold: float = 0.3) -> set[Link]:
    """The word links ``method`` (one of :data:`~attnviz.links.DIRECTIONAL`) extracts from a reading."""
    if method not in DIRECTIONAL:
        raise InputError(f"a Hugging Face model's links come from {', '.join(DIRECTIONAL)}, not {method!r}")
    return directional_links(reading.weights, method, threshold)


def force_words(model: HFModel, source: list[str], target: list[str], line: int | None = None) -> CrossAttention:
    """``target`` forced through the model for ``source`` (both tokenized, joined by spaces), checked to
    read as the same number of words as the gold indexes."""
    where = f"line {line}: " if line is not None else ""
    if not source or not target:
        raise DataError(f"{where}an empty sentence; remove the pair from both files (and from the gold)")
    c = model.force(" ".join(source), " ".join(target))
    reading = word_reading(c, Pick())
    if (len(reading.source_words), len(reading.target_words)) != (len(source), len(target)):
        raise DataError(
            f"{where}the tokenizer reads {len(reading.source_words)} source and {len(reading.target_words)} target "
            f"words where the gold counts {len(source)} and {len(target)}; tokenize the files with spaces around "
            "punctuation as the tokenizer cuts them"
        )
    return c


def pieces_of(c: CrossAttention, pick: Pick) -> np.ndarray:
    """A pick's weights on the tokenizer's pieces: ``[tgt_pieces, src_pieces]``."""
    return c.heads_weights(list(pick.heads)) if pick.heads else c.pieces_weights(pick.layer, pick.head)


def word_matrices(c: CrossAttention, picks: list[Pick]) -> tuple[np.ndarray, list[str], list[str]]:
    """Each pick read as words as :func:`word_reading` reads one, all at once: ``([picks, tgt_words,
    src_words], source words, target words)``. The word grouping is the same for every head of a decode,
    so it is found once; a word's columns are summed, its rows averaged, the ``<eos>`` column left out
    and each row renormalised (0 where all of it was on ``<eos>``)."""
    reading = word_reading(c, Pick())  # the grouping: token -> word, -1 for the hidden <eos>
    stack = np.stack([pieces_of(c, pick) for pick in picks])  # [picks, tgt_pieces, src_pieces]
    tokens = c.weights_of(stack)  # [picks, tgt_tokens, src_tokens]
    rows = word_groups(reading.target_index)[: len(reading.target_words)]  # the <eos> row left out
    columns = word_groups(reading.source_index)  # the hidden <eos> (word -1) in no column
    words = merge_groups(tokens, rows, columns)  # [picks, tgt_words, src_words]
    total = words.sum(axis=-1, keepdims=True)  # [picks, tgt_words, 1]
    words = np.divide(words, total, out=np.zeros_like(words), where=total > 0)
    return words, reading.source_words, reading.target_words


def word_stack(c: CrossAttention) -> tuple[np.ndarray, list[str], list[str]]:
    """Every head read as words (:func:`word_matrices`): ``([layers, heads, tgt_words, src_words], source
    words, target words)``, for the grid of heads."""
    picks = [Pick(layer, head) for layer in range(c.layers) for head in range(c.heads)]
    words, src, tgt = word_matrices(c, picks)
    return words.reshape(c.layers, c.heads, *words.shape[1:]), src, tgt


def head_aer(c: CrossAttention, gold: GoldAlignment, method: str = "argmax") -> np.ndarray:
    """Each head's AER against one pair's gold links: ``[layers, heads]``."""
    stack, _, _ = word_stack(c)
    grid = np.zeros((c.layers, c.heads))
    for layer in range(c.layers):
        for head in range(c.heads):
            links = sorted(directional_links(stack[layer, head], method))
            grid[layer, head] = score_links([links], [gold])[0].aer
    return grid


def every_pick(layers: int, heads: int) -> list[Pick]:
    """The average, each layer, and each head, in that order."""
    picks = [Pick()] + [Pick(layer) for layer in range(layers)]
    return picks + [Pick(layer, head) for layer in range(layers) for head in range(heads)]


def score_picks(
    model: HFModel,
    sources: list[list[str]],
    targets: list[list[str]],
    gold: list[GoldAlignment],
    picks: list[Pick] | None = None,
    method: str = "argmax",
    threshold: float = 0.3,
) -> list[dict]:
    """Precision, recall and AER against ``gold`` of each pick's links (every head, layer and the
    average by default), one forced decode per pair: rows ``{"attention", "layer", "head", "precision",
    "recall", "F1", "AER", "links"}`` in the order of ``picks``."""
    if not len(sources) == len(targets) == len(gold):
        raise DataError(
            f"{len(sources)} source, {len(targets)} target sentences and {len(gold)} gold lines; give "
            "one of each per pair"
        )
    picks = picks or every_pick(model.info.layers, model.info.heads)
    predicted: list[list[list[Link]]] = [[] for _ in picks]
    if method not in DIRECTIONAL:
        raise InputError(f"a Hugging Face model's links come from {', '.join(DIRECTIONAL)}, not {method!r}")
    for n, (src, tgt) in enumerate(zip(sources, targets, strict=True), start=1):
        words, _, _ = word_matrices(force_words(model, src, tgt, n), picks)  # [picks, tgt_words, src_words]
        for k, matrix in enumerate(words):
            predicted[k].append(sorted(directional_links(matrix, method, threshold)))
    rows = []
    for pick, links in zip(picks, predicted, strict=True):
        total, _ = score_links(links, gold)
        rows.append(
            {
                "attention": pick.name,
                "layer": pick.layer,
                "head": pick.head,
                "precision": round(total.precision, 3),
                "recall": round(total.recall, 3),
                "F1": round(total.f1, 3),
                "AER": round(total.aer, 3),
                "links": total.predicted,
            }
        )
    return rows
