"""Validation loss after the same number of steps in float32 and in bf16 mixed precision.

Trains a recipe's model with ``attnviz.training.fit.fit`` once per precision, from the same initial
weights, batches and dropout masks, for ``--steps`` steps (the recipe's schedule spread over
those steps, no time budget), and reports the validation loss after each epoch and at the
end (evaluated in float32), with the training time. Needs the recipe's data (Multi30k:
../shared/data).

    python benchmarks/precision_ab.py --recipe pretrained/recipes/multi30k-de-en-additive-bahdanau.json --steps 300
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attnviz.data.spec import load_corpus
from attnviz.devices import PRECISIONS
from attnviz.training.config import TrainConfig
from attnviz.training.fit import build_translator, fit
from attnviz.training.recipes import Recipe

EPOCH_FIGURES = ("epoch", "step", "loss", "valid_loss", "valid_accuracy", "seconds")  # of each history row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", required=True)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--precisions", nargs="+", choices=PRECISIONS, default=["fp32", "bf16"])
    args = parser.parse_args()
    recipe = Recipe.from_file(args.recipe)
    corpus = load_corpus(recipe.data, **recipe.data_options)
    for precision in args.precisions:
        translator = build_translator(
            corpus,
            min_freq=recipe.min_freq,
            max_vocab=recipe.max_vocab,
            seed=recipe.train.get("seed", 0),
            **recipe.model,
        )
        settings = {
            "max_steps": args.steps,
            "max_seconds": None,
            "probe": None,
            "average_last": 0,
            "num_threads": args.threads,
            "precision": precision,
        }
        result = fit(translator, corpus, TrainConfig(**{**recipe.train, **settings}))
        rows = [{k: row[k] for k in EPOCH_FIGURES} for row in result.history]
        meta = translator.meta
        report = {"recipe": recipe.name, "precision": meta["precision"], "hardware": meta["hardware"], "epochs": rows}
        print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
