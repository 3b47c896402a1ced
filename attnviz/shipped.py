"""Checks that tie each shipped model to its manifest entry: the metrics of a fixed small
sample (the first pairs of its test split), stored when the manifest is written and
re-measured by the tests, so a manifest cannot drift from its model."""

from __future__ import annotations

import json

from attnviz.catalog import PRETRAINED_DIR
from attnviz.checkpoint import load_checkpoint
from attnviz.data.spec import load_corpus, pair_options
from attnviz.evaluate import evaluate

CHECK_PAIRS = 40


def check_metrics(file: str, n: int = CHECK_PAIRS) -> dict:
    """BLEU, exact match, AER and entropy of a shipped model on the first ``n`` test pairs."""
    model = load_checkpoint(PRETRAINED_DIR / file)
    recipe = json.loads((PRETRAINED_DIR / "recipes" / f"{model.meta['name']}.json").read_text(encoding="utf-8"))
    corpus = load_corpus(recipe["data"], **pair_options(recipe.get("data_options", {})))
    report = evaluate(model, corpus.split("test")[:n], beam_size=1)
    return {k: v for k, v in report.to_dict().items() if k in ("n", "bleu", "exact_match", "aer", "entropy")}
