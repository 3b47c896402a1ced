"""Checks that tie each shipped model to its manifest entry: the metrics of a fixed small
sample (the first pairs of its test split), stored when the manifest is written and
re-measured by the tests, so a manifest cannot drift from its model."""

from __future__ import annotations

from pathlib import Path

from attnviz.catalog import PRETRAINED_DIR
from attnviz.checkpoint import load_checkpoint
from attnviz.data.spec import load_corpus
from attnviz.evaluate import evaluate, measured_on

CHECK_PAIRS = 40


def recipe_path(name: str) -> Path:
    """A shipped model's recipe file, ``pretrained/recipes/NAME.json``."""
    return PRETRAINED_DIR / "recipes" / f"{name}.json"


def _corpus(meta: dict):
    spec, options = measured_on(meta)
    return load_corpus(spec, **options)


def check_metrics(file: str, n: int = CHECK_PAIRS) -> dict:
    """BLEU, exact match, AER and entropy of a shipped model on the first ``n`` test pairs."""
    model = load_checkpoint(PRETRAINED_DIR / file)
    corpus = _corpus(model.meta)
    report = evaluate(model, corpus.split("test")[:n], beam_size=1)
    return {k: v for k, v in report.to_dict().items() if k in ("n", "bleu", "exact_match", "aer", "entropy")}
