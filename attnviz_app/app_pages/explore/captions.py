"""What the Weights caption says about each map's rows: the truth per score, read from the
numbers drawn (a softmax row sums to 1; local-p's Gaussian leaves less; a row whose weight sat
on a hidden ``<eos>`` is 0)."""

from __future__ import annotations

import numpy as np

from attnviz.decoding import Alignment

TOLERANCE = 1e-3  # float32 weights: a softmax row sums to 1 within this


def row_sums(al: Alignment) -> str:
    """How the rows of ``al``'s weights sum, in words: "each row sums to 1" or the range."""
    sums = np.asarray(al.weights, dtype=np.float64).sum(axis=1)  # [tgt]
    if sums.size == 0 or np.all(np.abs(sums - 1) < TOLERANCE):
        return "each row sums to 1"
    low, high = float(sums.min()), float(sums.max())
    span = f"{low:.2f}" if high - low < 0.005 else f"{low:.2f} to {high:.2f}"
    why = (
        "local-p multiplies the softmax by a Gaussian around $p_t$, so a row keeps less than 1"
        if al.positions is not None
        else "the weights are not a softmax over this row"
    )
    if np.any(sums < TOLERANCE) and al.positions is None:
        why = "a row that put all its weight on the hidden `<eos>` is 0"
    return f"rows sum to {span} ({why})"


def weights_caption(panels: dict[str, Alignment]) -> str:
    """The Weights view's first sentences, with each panel's row sums as they are."""
    said = {name: row_sums(al) for name, al in panels.items()}
    if len(set(said.values())) == 1:
        sums = next(iter(said.values()))
    else:
        sums = "; ".join(f"{name}: {text}" for name, text in said.items())
    return (
        rf"Row $t$ is what the decoder read while writing target token $t$: $a_{{t,s}}$, {sums}, and the"
        r" context is $c_t = \sum_s a_{t,s} \bar h_s$. Click a cell for its numbers; ⚠ marks unknown words."
    )
