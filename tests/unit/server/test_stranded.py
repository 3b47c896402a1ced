"""Trainings a killed server left unfinished: listed, resumed, kept and discarded."""

from __future__ import annotations

import pytest

from attnviz.errors import ConfigError
from attnviz.server import stranded
from attnviz.server.jobs import DONE, JobRegistry
from attnviz.store.checkpoint import load_checkpoint
from attnviz.training.resume_state import state_path
from tests.support.checkpoints import rewrite
from tests.support.jobs import stranded_run, tiny_recipe, wait


def test_stranded_runs_are_listed_kept_resumed_and_discarded(models):
    path = stranded_run(models)
    assert state_path(path).is_file()  # what the resume needs beyond the checkpoint, not listed as a run
    [run_] = stranded.stranded_runs(models)
    assert (run_.name, run_.epochs_done, run_.epochs, run_.finished) == ("cut", 1, 3, False)
    assert run_.recipe.name == "cut" and run_.path == path

    registry = JobRegistry(max_jobs=1)
    assert registry.submit("s0", tiny_recipe("cut", epochs=1), folder=models).out.stem == "cut-2"  # name held
    registry.forget("s0")
    recipe_ = stranded.resume_stranded("cut", models)
    job = registry.submit("s1", recipe_, folder=models, resume="cut")
    wait(job)
    snap = job.snapshot()
    assert snap.status == DONE, snap.error
    assert [e["epoch"] for e in snap.epochs] == [2, 3]  # continued from its last epoch
    assert snap.result_path == models / "cut.safetensors" and not path.exists() and not state_path(path).exists()

    kept = stranded_run(models, "other")
    assert stranded.keep_stranded("other", models) == models / "other.safetensors"
    assert not kept.exists() and load_checkpoint(models / "other.safetensors").meta["progress"]["epoch"] == 1
    assert not state_path(kept).exists() and state_path(models / "other.safetensors").is_file()  # moved with it

    gone = stranded_run(models, "gone")
    stranded.discard_stranded("gone", models)
    assert not gone.exists() and not state_path(gone).exists() and stranded.stranded_runs(models) == []
    with pytest.raises(ConfigError, match="no unfinished training"):
        stranded.keep_stranded("gone", models)


def test_a_run_trained_on_an_upload_is_listed_to_its_own_session_only(models):
    path = stranded_run(models, "theirs")
    rewrite(path, path, attnviz=lambda h: {**h, "meta": {**h["meta"], "owner": "session-a"}})
    assert stranded.stranded_runs(models, viewer="session-b") == []  # its name and recipe come from A's upload
    assert [r.name for r in stranded.stranded_runs(models, viewer="session-a")] == ["theirs"]
