"""Guided alignment: a loss that pulls attention towards given word links.

Chen et al. (2016, "Guided Alignment Training for Topic-Aware NMT") and Garg et al. (2019,
"Jointly Learning to Align and Translate with Transformer Models") add to the translation
loss the cross-entropy between a reference alignment distribution ``A`` and the attention
``α``::

    L_align = - 1/|T_aligned| * Σ_b Σ_{t aligned} Σ_s A[b, t, s] · log α[b, t, s]

where row ``A[b, t]`` spreads one unit uniformly over the source positions linked to target
position ``t``, and target positions without a link (and padding) are masked out. The
training loss is then ``L_translation + weight · L_align``.

Links are ``(source_index, target_index)`` pairs over the model's own tokens (for subword
models expand word links with :func:`piece_links` first). ``attnviz.training.fit.fit`` adds the loss
when ``TrainConfig.guided_weight`` > 0; :mod:`attnviz.training.guided_links` makes the links.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch

from attnviz.data import Link, word_spans
from attnviz.errors import InputError

# One fixed weight for the whole training. Chen et al. decay theirs so that translation takes
# over late, and Garg et al. use 0.05 on one head of a multi-head Transformer whose other heads
# stay free; here the single attention distribution is what the app shows as the alignment, so
# the pull towards the links should last to the end rather than fade. On Multi30k de-en the
# (label-smoothed, per-token) translation loss falls from about 7 to 3 over training, and
# L_align (per linked row) starts at 2.6 with eflomal links (flat attention over ~15 sources)
# and is 0 at best for a word with one link (log k for k links); at 0.3 the alignment term is
# about a tenth of the loss at the start: enough to shape attention, too little to buy
# alignment at the cost of translation.
DEFAULT_WEIGHT = 0.3


def link_grid(links: Sequence[Iterable[Link]], tgt_len: int, src_len: int) -> torch.Tensor:
    """Per-sentence links as a boolean grid ``[B, T, S]``: cell ``(b, t, s)`` is True where source
    ``s`` of sentence ``b`` is linked to target ``t``."""
    cells = [(b, j, i) for b, sentence in enumerate(links) for i, j in sentence]
    for b, j, i in cells:
        if not (0 <= i < src_len and 0 <= j < tgt_len):
            raise InputError(
                f"sentence {b}: link {i}-{j} is outside the batch's {src_len} source and {tgt_len} target "
                "positions; links must index the model's tokens (expand word links with piece_links)"
            )
    grid = torch.zeros(len(links), tgt_len, src_len, dtype=torch.bool)  # [B, T, S]
    if cells:
        grid[tuple(torch.tensor(cells).T)] = True  # one scatter, not a Python loop of tensor writes
    return grid


def reference_rows(grid: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The reference distribution ``[B, T, S]`` and its row mask ``[B, T]`` from a link grid
    ``[B, T, S]`` (see :func:`link_grid`): each linked row uniform over its linked sources."""
    ref = grid.float()  # [B, T, S]
    counts = ref.sum(dim=2)  # [B, T]
    mask = counts > 0  # [B, T]
    return ref / counts.clamp(min=1).unsqueeze(2), mask  # [B, T, S] rows sum to 1 where linked


def guided_alignment_loss(
    attention: torch.Tensor, reference: torch.Tensor, mask: torch.Tensor, eps: float = 1e-9
) -> torch.Tensor:
    """Mean cross-entropy ``-Σ_s A log α`` over the unmasked target positions (0 if there are none).

    ``attention`` ``[B, T, S]`` holds softmax rows (padding at zero), ``reference`` ``[B, T, S]``
    the reference rows and ``mask`` ``[B, T]`` which rows count. ``eps`` keeps ``log 0`` finite
    where attention is exactly zero (a padded or local-window position).
    """
    if attention.shape != reference.shape or attention.shape[:2] != mask.shape:
        raise InputError(
            f"attention {tuple(attention.shape)}, reference {tuple(reference.shape)} and mask "
            f"{tuple(mask.shape)} disagree; pass [B, T, S], [B, T, S] and [B, T] of the same batch"
        )
    reference = reference.to(attention.dtype)
    cross = -(reference * torch.log(attention + eps)).sum(dim=2)  # [B, T]
    mask = mask.to(attention.dtype)  # [B, T]
    return (cross * mask).sum() / mask.sum().clamp(min=1.0)


def piece_links(links: Iterable[Link], source_pieces: list[str], target_pieces: list[str]) -> list[Link]:
    """Word links expanded to subword pieces: word ``i``-``j`` links every piece of ``i`` to every piece of ``j``."""

    def pieces_of(tokens: list[str]) -> list[range]:
        spans = sorted(set(word_spans(tokens)))  # [(start, end)] one per word
        return [range(start, end) for start, end in spans]

    src_words, tgt_words = pieces_of(source_pieces), pieces_of(target_pieces)
    out = set()
    for i, j in links:
        if not (0 <= i < len(src_words) and 0 <= j < len(tgt_words)):
            raise InputError(
                f"link {i}-{j} is outside the {len(src_words)} source and {len(tgt_words)} target words; "
                "give word-level links of this sentence pair"
            )
        out.update((s, t) for s in src_words[i] for t in tgt_words[j])
    return sorted(out)
