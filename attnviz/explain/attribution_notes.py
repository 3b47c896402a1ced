"""What an attribution's quiet parts mean, in words: a pale ``<eos>`` row and IG deltas near 0."""

from __future__ import annotations

import numpy as np

from attnviz.data import EOS
from attnviz.explain.attribution import MAX_STEPS, Attribution

PALE = 0.1  # a row whose largest |value| is under this share of the other rows' largest reads as blank


def eos_note(attr: Attribution) -> str:
    """Why the final ``<eos>`` row is (nearly) blank, with its numbers; ``""`` when it is not.

    The row attributes ``log p(<eos>)``. After the final full stop the decoder stops whatever the
    source says, so the source embeddings hardly move that log-probability: its values are small
    against the words' rows, not missing.
    """
    values = np.asarray(attr.values, dtype=np.float64)  # [tgt, src]
    if values.shape[0] < 2 or attr.target_tokens[-1] != EOS:
        return ""
    last, rest = float(np.abs(values[-1]).max()), float(np.abs(values[:-1]).max())
    if rest == 0 or last >= PALE * rest:
        return ""
    p = float(np.exp(attr.log_probs[-1]))
    before = attr.target_tokens[-2]
    return (
        f"The {EOS} row is nearly blank, not missing: after “{before}” the decoder ends the sentence (p = {p:.2f})"
        f" from the words it has written, so no source token moves log p({EOS}) much (its largest |value| is"
        f" {last:.2g}, against {rest:.2g} at the other steps)."
    )


def delta_note(attr: Attribution) -> str:
    """What the integrated-gradients deltas say (``""`` for the other methods): near 0 the
    quadrature met completeness (each row sums to ``f_t(x) - f_t(baseline)``); far from it, more
    steps are needed."""
    if attr.delta is None or not np.size(attr.delta):
        return ""
    worst = float(np.abs(attr.delta).max())
    if worst < 1e-3:
        return (
            f"IG delta at most {worst:.1e}: each row sums to f_t(x) − f_t(baseline) up to float rounding, as"
            " integrated gradients should (completeness); a delta far from 0 would ask for more steps."
        )
    if attr.steps is not None and attr.steps >= MAX_STEPS:
        advice = (
            f"even {MAX_STEPS} quadrature steps leave it, as the path from the baseline crosses a change too sharp"
            " for the rule: read these rows with care, or use occlusion"
        )
    else:
        advice = f"more quadrature steps (up to {MAX_STEPS}) bring it towards 0"
    return f"IG delta up to {worst:.2g}: the rows miss f_t(x) − f_t(baseline) by that much; {advice}."
