"""Several models' attention on one sentence pair, measured against its gold alignment."""

from __future__ import annotations

from collections.abc import Mapping

from attnviz.data import Pair
from attnviz.decoding import Alignment
from attnviz.errors import InputError
from attnviz.evaluation.metrics import aer, alignment_links, mean_entropy


def aer_rows(alignments: Mapping[str, Alignment], pair: Pair, digits: int = 3) -> list[dict[str, str | float]]:
    """One row per model, in the order given: ``{"model", "AER", "mean entropy"}``.

    ``alignments`` maps a model's name to its attention forced through ``pair.target``. AER takes
    the argmax link of each target token (attention on ``<eos>`` is no link, see
    :func:`~attnviz.evaluation.metrics.alignment_links`) against the pair's sure and possible
    links; mean entropy is in nats. Both are rounded to ``digits`` places.
    """
    if pair.sure is None:
        raise InputError("this pair has no gold alignment; pick a test pair of a task with gold links")
    n_source, n_target = len(pair.source_tokens), len(pair.target_tokens)
    return [
        {
            "model": name,
            "AER": round(aer([alignment_links(al, n_source, n_target)], [pair.sure], [pair.possible or []]), digits),
            "mean entropy": round(mean_entropy(al), digits),
        }
        for name, al in alignments.items()
    ]
