"""Tiny recipes for background jobs, waiting for a job, and a training left unfinished."""

from __future__ import annotations

from pathlib import Path

from attnviz.server.jobs import TrainingJob
from attnviz.store import files
from attnviz.training.recipes import Recipe, run_recipe

TINY_MODEL = {"emb_dim": 16, "hidden_dim": 24, "attn_dim": 12, "dropout": 0.0}


def tiny_recipe(name: str = "tiny", epochs: int = 2, data: str = "reverse", **train) -> Recipe:
    return Recipe(
        name=name,
        data=data,
        data_options={"n_train": 200, "n_valid": 20, "n_test": 20},
        model=TINY_MODEL,
        train={"epochs": epochs, "batch_size": 32, "probe": "a b c", **train},
    )


def wait(job: TrainingJob, timeout: float = 60.0) -> None:
    job.join(timeout)
    assert not job.snapshot().active, "the job did not finish in time"


def stranded_run(models: Path, name: str = "cut", epochs: int = 3) -> Path:
    """A training killed after its first epoch: its checkpoint in the staging folder, no lock."""
    rec = Recipe(**{**tiny_recipe(name, epochs=epochs).to_dict(), "train": {**tiny_recipe().train, "epochs": epochs}})
    rec.train["num_threads"] = 1
    path = models / files.STAGING / f"{name}.safetensors"
    ended = []
    run_recipe(rec, path, callback=lambda p: p.kind == "epoch" and ended.append(1), should_stop=lambda: bool(ended))
    return path
