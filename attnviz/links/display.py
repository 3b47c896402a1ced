"""Ways of showing an alignment that change what is drawn, never the decode: hide the source's
``<eos>`` column, merge subword pieces into words, keep the first steps of two decodes so that
their rows line up."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from attnviz.data import EOS
from attnviz.decoding import Alignment
from attnviz.errors import InputError
from attnviz.links.reading import caption, hide_eos, merge_groups, whole_rows, word_groups, word_index

HIDDEN_EOS_NOTE = "<eos> hidden, rows renormalised"
MERGED_NOTE = "pieces merged into words"


def without_eos(al: Alignment) -> Alignment:
    """``al`` without the source's final ``<eos>`` column, each weight row rescaled to keep its total
    (1 for a softmax row; local-p's less, see :func:`attnviz.links.reading.hide_eos`).

    Raw scores lose the column too but are not rescaled (the softmax is over scores, and the
    remaining ones keep their values). A row that put all its weight on ``<eos>`` becomes 0.
    Contexts, states and everything else stay as decoded.
    """
    if al.source_tokens[-1:] != [EOS] or len(al.source_tokens) < 2:
        return al
    w, _ = hide_eos(al.weights, al.source_tokens, keep_total=True)  # [tgt, src - 1]
    shown = replace(
        al,
        source_tokens=list(al.source_tokens[:-1]),
        source_unknown=list(al.source_unknown[:-1]),
        weights=w.astype(np.float32),
        scores=np.asarray(al.scores)[:, :-1],
    )
    return _with_hypotheses(al, shown, without_eos)


def _with_hypotheses(al: Alignment, shown: Alignment, transform: Callable[[Alignment], Alignment]) -> Alignment:
    """``shown`` (``al`` transformed) with ``al``'s n-best list transformed too. Beam search lists
    the best decode itself first (``al.hypotheses[0] is al``): it becomes ``shown``, not a recursion."""
    shown.hypotheses = [shown if h is al else transform(h) for h in al.hypotheses]
    return shown


def merged_pieces(al: Alignment) -> Alignment:
    """``al`` with subword pieces merged into words (see :mod:`attnviz.links.reading`); ``al`` itself when
    no token is a piece.

    A source word's weight columns are summed and a target word's rows averaged, so each row is
    still a distribution. Raw scores combine a word's pieces by log-sum-exp (the softmax of a row
    then gives the summed weights), then average the rows. Contexts and decoder states are
    averaged over a target word's pieces (a context is linear in its weights: the averaged context
    is the context of the averaged row), token log-probabilities summed (the word's), the encoder's
    self-attention merged like the weights. Local attention's centres ``p_t`` count pieces and are
    dropped. A word is unknown when one of its pieces is.
    """
    src_index, src_words = word_index(list(al.source_tokens))
    tgt_index, tgt_words = word_index(list(al.target_tokens))
    if len(src_words) == len(al.source_tokens) and len(tgt_words) == len(al.target_tokens):
        return al
    src, tgt = word_groups(src_index), word_groups(tgt_index)
    unknown = list(al.source_unknown) + [False] * (len(al.source_tokens) - len(al.source_unknown))
    weights = merge_groups(al.weights, tgt, src)  # [tgt_words, src_words]
    scores = merge_groups(al.scores, tgt, src, np.logaddexp.reduce)  # [tgt_words, src_words]
    encoder = None
    if al.encoder_attention is not None:  # [layers, heads, src, src]: query rows averaged, key columns summed
        encoder = merge_groups(al.encoder_attention, src, src)  # [layers, heads, src_words, src_words]
    log_probs = None
    if al.token_log_probs is not None:
        lp = np.asarray(al.token_log_probs, dtype=np.float64)  # [tgt]
        log_probs = np.array([lp[g].sum() for g in tgt])  # [tgt_words]
    shown = replace(
        al,
        source_tokens=src_words,
        target_tokens=tgt_words,
        source_unknown=[any(unknown[s] for s in g) for g in src],
        weights=weights.astype(np.float32),
        scores=scores,
        contexts=_mean_rows(al.contexts, tgt),
        states=_mean_rows(al.states, tgt),
        token_log_probs=log_probs,
        positions=None,
        window=None,
        encoder_attention=encoder,
    )
    return _with_hypotheses(al, shown, merged_pieces)


def _mean_rows(a: np.ndarray | None, groups: list[list[int]]) -> np.ndarray | None:
    """Each target word's mean row of ``a`` (``[tgt, ...]``), in ``a``'s dtype; ``None`` stays ``None``."""
    return None if a is None else merge_groups(a, groups, None).astype(np.asarray(a).dtype)


class Shown(NamedTuple):
    """An alignment as the display options draw it."""

    alignment: Alignment
    note: str  # for the figure's title; "" when nothing changed
    rule: str  # the one-sentence rule for the caption under the figure (attnviz.links.reading.caption)
    merged: bool  # pieces were merged: the grid is no longer the decode's


def for_reading(al: Alignment, hide: bool, merge: bool) -> Shown:
    """``al`` as the display options ask: pieces merged into words first, then ``<eos>`` hidden."""
    shown = merged_pieces(al) if merge else al
    merged = shown is not al
    shown = without_eos(shown) if hide else shown
    note = "; ".join(text for text, on in ((MERGED_NOTE, merged), (HIDDEN_EOS_NOTE, hide)) if on)
    return Shown(shown, note, caption(hide, merged, whole_rows(al.weights)), merged)


def first_steps(al: Alignment, n: int) -> Alignment:
    """The first ``n`` decoder steps of ``al`` (its rows 0..n-1)."""
    if not 0 <= n <= len(al.target_tokens):
        raise InputError(f"n must be in 0..{len(al.target_tokens)}, got {n}")

    def cut(a: np.ndarray | None) -> np.ndarray | None:
        return None if a is None else np.asarray(a)[:n]

    return replace(
        al,
        target_tokens=list(al.target_tokens[:n]),
        weights=cut(al.weights),
        scores=cut(al.scores),
        contexts=cut(al.contexts),
        states=cut(al.states),
        token_log_probs=cut(al.token_log_probs),
        positions=cut(al.positions),
        hypotheses=[],
    )


def parting_step(a: Alignment, b: Alignment) -> int | None:
    """The first step at which two decodes write different tokens, before the last step both have;
    None where they agree up to there (rows after it line up by step, not by word)."""
    steps = min(len(a.target_tokens), len(b.target_tokens))
    return next((t for t in range(steps - 1) if a.target_tokens[t] != b.target_tokens[t]), None)


def common_steps(a: Alignment, b: Alignment) -> tuple[Alignment, Alignment]:
    """Two decodes of one source cut to the steps both have, so row t of each is step t.

    Two models' free translations may differ in length; a difference or divergence is only
    defined where both have a step.
    """
    if list(a.source_tokens) != list(b.source_tokens):
        raise InputError("the two decodes read different source tokens; use models with the same source tokenizer")
    n = min(len(a.target_tokens), len(b.target_tokens))
    return first_steps(a, n), first_steps(b, n)
