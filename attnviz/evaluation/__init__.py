"""Measuring models: BLEU, AER, entropy; evaluating checkpoints; the leaderboard."""

from attnviz.evaluation.compare import aer_rows
from attnviz.evaluation.evaluate import Evaluation, evaluate, evaluate_checkpoints, foreign_note, measured_on
from attnviz.evaluation.leaderboard import (
    LEADERBOARD_DECIMALS,
    LEADERBOARD_FIELDS,
    LEADERBOARD_KEYS,
    attribution_records,
    leaderboard_markdown,
    leaderboard_records,
    write_table,
)
from attnviz.evaluation.metrics import (
    AlignmentCounts,
    aer,
    alignment_counts,
    alignment_links,
    bleu,
    entropy,
    js_divergence,
    mean_entropy,
)

__all__ = [
    "LEADERBOARD_DECIMALS",
    "LEADERBOARD_FIELDS",
    "LEADERBOARD_KEYS",
    "AlignmentCounts",
    "Evaluation",
    "aer",
    "aer_rows",
    "alignment_counts",
    "alignment_links",
    "attribution_records",
    "bleu",
    "entropy",
    "evaluate",
    "evaluate_checkpoints",
    "foreign_note",
    "js_divergence",
    "leaderboard_markdown",
    "leaderboard_records",
    "mean_entropy",
    "measured_on",
    "write_table",
]
