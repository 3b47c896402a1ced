"""Training batches: length-bucketed, padded, shuffled reproducibly, with the links of guided training."""

from __future__ import annotations

import random
from collections.abc import Sequence

import torch

from attnviz.data import PAD_ID, Link, Pair, Vocab
from attnviz.errors import InputError
from attnviz.training.distributed import Batch
from attnviz.training.guided import link_grid


def make_batches(
    pairs: list[Pair],
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    batch_size: int,
    rng: random.Random | None,
    links: Sequence[Sequence[Link]] | None = None,
) -> list[Batch]:
    """Length-bucketed padded batches ``(src [B, S], lengths [B], tgt [B, T+1])``.

    ``tgt`` is ``<bos> y_1 ... y_n <eos>`` padded; the model reads ``tgt[:, :-1]`` and is
    scored on ``tgt[:, 1:]``. With ``rng`` the order is shuffled (reproducibly). Batches group
    pairs of similar source length (about 4% source padding on Multi30k, 31% target padding,
    where the output layer does not run: see ``attnviz.training.fit._loss_and_accuracy``).
    Grouping by target length instead ran de-en epochs no faster and learned slightly less per
    step (docs/speed.md, "Training on real data").

    ``links`` (guided training: one list per pair, ``(source_index, target_index)`` over its
    tokens) adds a fourth item, the links as a boolean grid ``[B, T, S]`` (see
    :func:`attnviz.training.guided.link_grid`): each pair's links travel with its ids through the
    shuffles and the bucketing. Grid row ``t`` is the step that writes ``tgt[:, t + 1]``, target
    token ``t``; no link reaches the ``<eos>`` of either side.
    """
    if links is not None and len(links) != len(pairs):
        raise InputError(f"{len(links)} link lists for {len(pairs)} pairs; give one list per training pair, in order")
    encoded = [
        (
            src_vocab.encode(p.source_tokens, eos=True),
            tgt_vocab.encode(p.target_tokens, bos=True, eos=True),
            None if links is None else _checked_links(k, p, links[k]),
        )
        for k, p in enumerate(pairs)
    ]
    order = list(range(len(encoded)))
    if rng is not None:
        rng.shuffle(order)
    pool = 50 * batch_size  # sort inside pools so batches hold similar lengths
    batches = []
    for start in range(0, len(order), pool):
        chunk = sorted(order[start : start + pool], key=lambda i: len(encoded[i][0]))
        batches.extend(chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size))
    if rng is not None:
        rng.shuffle(batches)
    return [pad_batch([encoded[i] for i in batch]) for batch in batches]


def _checked_links(k: int, pair: Pair, links: Sequence[Link]) -> list[Link]:
    """The links of training pair ``k`` (0-based), refused if one falls outside its tokens."""
    n_src, n_tgt = len(pair.source_tokens), len(pair.target_tokens)
    for i, j in links:
        if not (0 <= i < n_src and 0 <= j < n_tgt):
            raise InputError(
                f"training pair {k + 1} ({pair.source!r}): link {i}-{j} is outside its {n_src} source and {n_tgt} "
                "target tokens; links index the pair's tokens (expand word links with "
                "attnviz.training.guided.piece_links)"
            )
    return list(links)


def pad_batch(items: list[tuple[list[int], list[int], list[Link] | None]]) -> Batch:
    """``(source ids, <bos> target ids <eos>, links or None)`` per pair -> one padded batch."""
    lengths = torch.tensor([len(s) for s, _, _ in items])
    src = torch.full((len(items), int(lengths.max())), PAD_ID)  # [B, S]
    tgt = torch.full((len(items), max(len(t) for _, t, _ in items)), PAD_ID)  # [B, T+1]
    for row, (s, t, _) in enumerate(items):
        src[row, : len(s)] = torch.tensor(s)
        tgt[row, : len(t)] = torch.tensor(t)
    if items[0][2] is None:
        return src, lengths, tgt
    return src, lengths, tgt, link_grid([links for _, _, links in items], tgt.size(1) - 1, src.size(1))  # [B, T, S]
