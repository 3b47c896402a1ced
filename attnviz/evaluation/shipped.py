"""Checks that tie each shipped model to its manifest entry: the metrics of a fixed small
sample (the first pairs of its test split), stored when the manifest is written and
re-measured by the tests, so a manifest cannot drift from its model."""

from __future__ import annotations

from attnviz.data import load_corpus
from attnviz.evaluation.evaluate import evaluate, measured_on
from attnviz.store import load_checkpoint, pretrained_dir

CHECK_PAIRS = 40


def check_metrics(file: str, n: int = CHECK_PAIRS) -> dict:
    """BLEU, exact match, AER and entropy of a shipped model on the first ``n`` test pairs."""
    model = load_checkpoint(pretrained_dir() / file)
    spec, options = measured_on(model.meta)
    report = evaluate(model, load_corpus(spec, **options, split="test").test[:n], beam_size=1)
    return {k: v for k, v in report.to_dict().items() if k in ("n", "bleu", "exact_match", "aer", "entropy")}
