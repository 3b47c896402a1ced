"""What the Weights caption says about each map's rows: the truth per score, read from the
numbers drawn (a softmax row sums to 1; local-p's Gaussian leaves less; a row whose weight sat
on a hidden ``<eos>`` is 0)."""

from __future__ import annotations

import numpy as np

from attnviz.decoding import Alignment
from attnviz.links import whole_rows
from attnviz.model import is_predictive
from attnviz_app.app_pages.shared.common import escape_markdown

EOS_NOTE_SHARE = 0.20  # a plain model's goal for attention on <eos> (docs/results.md, "Attention parked on <eos>")


def row_sums(al: Alignment) -> str:
    """How the rows of ``al``'s weights sum, in words: "each row sums to 1" or the range."""
    sums = np.asarray(al.weights, dtype=np.float64).sum(axis=1)  # [tgt]
    emptied = sums == 0  # a row whose every weight sat on a hidden <eos>
    if sums.size == 0 or (whole_rows(al.weights) and not emptied.any()):
        return "each row sums to 1"
    low, high = float(sums.min()), float(sums.max())
    span = f"{low:.2f}" if high - low < 0.005 else f"{low:.2f} to {high:.2f}"
    why = (
        "local-p multiplies the softmax by a Gaussian around $p_t$, so a row keeps less than 1"
        if is_predictive(al.score)
        else "the weights are not a softmax over this row"
    )
    if emptied.any() and not is_predictive(al.score):
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
        r" context is $c_t = \sum_s a_{t,s} h_s$ over the encoder's annotations $h_s$. Click a cell for its numbers;"
        " ⚠ marks unknown words."
    )


def eos_note(shares: dict[str, float | None], twins: dict[str, str | None], hidden: bool) -> str:
    """One sentence on the panels whose decode parks at least :data:`EOS_NOTE_SHARE` of its attention
    on the source ``<eos>`` (``shares``: the mean weight on it over the target words' rows): how much,
    what the Hide toggle does, and their guided twins (``twins``) where there are some."""
    parked = {name: share for name, share in shares.items() if share is not None and share >= EOS_NOTE_SHARE}
    if not parked:
        return ""
    if len(shares) == 1:
        who = f"This model puts {next(iter(parked.values())):.0%}"
    else:
        who = " and ".join(
            f"{name} {'puts ' if k == 0 else ''}{share:.0%}" for k, (name, share) in enumerate(parked.items())
        )
    text = f"{who} of this sentence's attention on the source `<eos>`"
    text += (
        " (hidden here: each row renormalised over the words)"
        if hidden
        else (" (the sidebar's *Hide `<eos>` and renormalise* shows the rest)")
    )
    named = {name: escape_markdown(twins[name]) for name in parked if twins.get(name)}
    if len(named) == 1 and len(shares) == 1:
        text += f"; its guided twin, {next(iter(named.values()))} in the checkpoint box, attends to words"
    elif len(named) == 1:
        name, twin = next(iter(named.items()))
        text += f"; {name}'s guided twin, {twin} in its checkpoint box, attends to words"
    elif named:
        text += f"; their guided twins, {' and '.join(named.values())} in the checkpoint boxes, attend to words"
    return text + "."
