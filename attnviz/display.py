"""Ways of showing an alignment that change what is drawn, never the decode: hide the source's
``<eos>`` column, keep the first steps of two decodes so that their rows line up."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from attnviz.data.vocab import EOS
from attnviz.errors import InputError
from attnviz.reading import hide_eos
from attnviz.trace import Alignment

HIDDEN_EOS_NOTE = "<eos> hidden, rows renormalised"


def without_eos(al: Alignment) -> Alignment:
    """``al`` without the source's final ``<eos>`` column, each weight row rescaled to sum to 1.

    Raw scores lose the column too but are not rescaled (the softmax is over scores, and the
    remaining ones keep their values). A row that put all its weight on ``<eos>`` becomes 0.
    Contexts, states and everything else stay as decoded.
    """
    if al.source_tokens[-1:] != [EOS] or len(al.source_tokens) < 2:
        return al
    w, _ = hide_eos(al.weights, al.source_tokens)  # [tgt, src - 1]
    hyps = [without_eos(h) for h in al.hypotheses]
    return replace(
        al,
        source_tokens=list(al.source_tokens[:-1]),
        source_unknown=list(al.source_unknown[:-1]),
        weights=w.astype(np.float32),
        scores=np.asarray(al.scores)[:, :-1],
        hypotheses=hyps,
    )


def first_steps(al: Alignment, n: int) -> Alignment:
    """The first ``n`` decoder steps of ``al`` (its rows 0..n-1)."""
    if not 0 <= n <= len(al.target_tokens):
        raise InputError(f"n must be in 0..{len(al.target_tokens)}, got {n}")

    def cut(a):
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


def common_steps(a: Alignment, b: Alignment) -> tuple[Alignment, Alignment]:
    """Two decodes of one source cut to the steps both have, so row t of each is step t.

    Two models' free translations may differ in length; a difference or divergence is only
    defined where both have a step.
    """
    if list(a.source_tokens) != list(b.source_tokens):
        raise InputError("the two decodes read different source tokens; use models with the same source tokenizer")
    n = min(len(a.target_tokens), len(b.target_tokens))
    return first_steps(a, n), first_steps(b, n)
