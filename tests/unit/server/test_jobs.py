"""Background training jobs: run to done, stop, the global cap, failures, abandonment, names (two
trainings with one name keep both)."""

from __future__ import annotations

import time

import pytest

from attnviz.server.jobs import DONE, FAILED, STOPPED, BusyError, JobRegistry, TrainingJob
from attnviz.server.stranded import stranded_runs
from attnviz.store import catalog, files, read_header, slugify
from tests.support.jobs import tiny_recipe, wait


def test_job_runs_to_done_and_saves_a_loadable_model(tmp_path):
    registry = JobRegistry(max_jobs=1)
    job = registry.submit("s1", tiny_recipe("My model: v1/../x"), folder=tmp_path)
    wait(job)
    snap = job.snapshot()
    assert snap.status == DONE, snap.error
    assert snap.fraction == 1.0
    assert snap.result_path == tmp_path / "My-model-v1-x.safetensors"
    assert [e["epoch"] for e in snap.epochs] == [1, 2]
    assert snap.steps and snap.probe is not None and snap.probe.weights.shape[1] == 4  # a b c <eos>
    assert not list((tmp_path / ".training").glob("*"))  # the staging file was moved, not copied
    translator = catalog.load(str(snap.result_path))
    assert translator.meta["metrics"]["n"] == 20
    assert registry.active() == []


def test_a_job_that_stops_early_says_so_in_its_snapshot(tmp_path):
    job = JobRegistry(max_jobs=1).submit("s1", tiny_recipe(epochs=30, lr=1.0, patience=1), folder=tmp_path)
    wait(job)
    snap = job.snapshot()
    assert snap.status == DONE and len(snap.epochs) < 30
    assert snap.ending.startswith(f"Stopped early after epoch {len(snap.epochs)} of 30: its validation loss")
    assert catalog.load(str(snap.result_path)).meta["ending"] == snap.ending


def test_stop_ends_the_job_and_frees_the_slot(tmp_path):
    registry = JobRegistry(max_jobs=1)
    job = registry.submit("s1", tiny_recipe(epochs=500, patience=None), folder=tmp_path)
    while not job.snapshot().steps:
        time.sleep(0.02)
    job.stop()
    wait(job)
    assert job.snapshot().status == STOPPED
    assert registry.active() == []
    registry.submit("s2", tiny_recipe("next", epochs=1), folder=tmp_path).join(60)


def test_a_stop_inside_an_epoch_keeps_the_finished_ones_and_says_so(tmp_path, monkeypatch):
    """Stopped 3 steps into epoch 2, the saved model holds epoch 1 and its history ends there, and the
    job says which epoch it was in and that it does not count. (The half epoch was counted as finished,
    its history point titled 'epoch 2 (end)'.)"""
    report = TrainingJob._report

    def stop_inside_epoch_2(job, progress):
        report(job, progress)
        if progress.kind == "step" and progress.epoch == 2 and progress.step == 7 + 3:  # 7 steps an epoch
            job.stop()

    monkeypatch.setattr(TrainingJob, "_report", stop_inside_epoch_2)
    job = JobRegistry(max_jobs=1).submit("s1", tiny_recipe(epochs=4, patience=None), folder=tmp_path)
    wait(job)
    snap = job.snapshot()
    assert snap.status == STOPPED and [e["epoch"] for e in snap.epochs] == [1]
    assert "inside epoch 2 of 4, which does not count" in snap.error and "best of the 1 epoch it" in snap.error
    saved = catalog.load(str(snap.result_path))
    assert saved.meta["epochs_run"] == 1 and saved.meta["progress"] == {**saved.meta["progress"], "epoch": 1, "step": 7}
    assert [p["step"] for p in saved.history.points][-1] == 7 == snap.history["points"][-1]["step"]


def test_the_cap_refuses_a_second_training_and_one_per_session(tmp_path):
    registry = JobRegistry(max_jobs=1)
    job = registry.submit("s1", tiny_recipe(epochs=500, patience=None), folder=tmp_path)
    try:
        with pytest.raises(BusyError, match="limit"):
            registry.submit("s2", tiny_recipe("other"), folder=tmp_path)
        with pytest.raises(BusyError, match="already trains"):
            two = JobRegistry(max_jobs=5)
            two._jobs["s1"] = job
            two.submit("s1", tiny_recipe("again"), folder=tmp_path)
    finally:
        job.stop()
        wait(job)


def test_the_cap_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("ATTNVIZ_MAX_TRAININGS", "3")
    assert JobRegistry().max_jobs == 3
    monkeypatch.setenv("ATTNVIZ_MAX_TRAININGS", "lots")
    with pytest.raises(ValueError, match="whole number"):
        _ = JobRegistry().max_jobs


def test_a_failing_recipe_reports_failed_with_the_message(tmp_path):
    registry = JobRegistry(max_jobs=1)
    job = registry.submit("s1", tiny_recipe(data="no-such-task"), folder=tmp_path)
    wait(job)
    snap = job.snapshot()
    assert snap.status == FAILED
    assert "unknown data spec" in snap.error
    assert registry.active() == [] and not list(tmp_path.glob("*.safetensors"))


def test_an_abandoned_job_stops_itself(tmp_path):
    registry = JobRegistry(max_jobs=1)
    alive = {"yes": True}
    job = registry.submit("s1", tiny_recipe(epochs=500, patience=None), folder=tmp_path, is_alive=lambda: alive["yes"])
    while not job.snapshot().epochs:
        time.sleep(0.02)
    alive["yes"] = False  # the session closed (a reload, a closed tab)
    assert registry.running() == 0  # stopping: its slot is free, and the Train page says it is leaving
    wait(job)
    assert not job.leaving()
    snap = job.snapshot()
    assert snap.status == STOPPED and "its page went away" in snap.error
    # nobody saw it stop: not a model beside the finished ones, but an unfinished training to keep or resume
    assert snap.result_path is None and not list(tmp_path.glob("*.safetensors"))
    [run] = stranded_runs(tmp_path)
    assert run.name == job.out.stem and 1 <= run.epochs_done < 500
    assert "metrics" not in read_header(run.path)["meta"]  # saved at once, not measured: it is to be resumed


def test_a_reloaded_page_is_not_refused_by_its_own_orphaned_training(tmp_path):
    registry, alive = JobRegistry(max_jobs=1), {"yes": True}
    orphan = registry.submit(
        "old", tiny_recipe("a", epochs=500, patience=None), folder=tmp_path, is_alive=lambda: alive["yes"]
    )
    alive["yes"] = False  # the page reloaded: its new session starts a training at once
    again = registry.submit("new", tiny_recipe("b", epochs=1), folder=tmp_path)
    wait(orphan)
    wait(again)
    assert orphan.snapshot().status == STOPPED and again.snapshot().status == DONE


def test_a_finished_job_is_dropped_once_its_session_has_ended(tmp_path):
    """(Nothing dropped them: a server kept every finished training of every session for its life.)"""
    registry, alive = JobRegistry(max_jobs=2), {"gone": True, "here": True}
    gone = registry.submit("gone", tiny_recipe("a", epochs=1), folder=tmp_path, is_alive=lambda: alive["gone"])
    here = registry.submit("here", tiny_recipe("b", epochs=1), folder=tmp_path, is_alive=lambda: alive["here"])
    wait(gone)
    wait(here)
    assert registry.get("gone") is gone  # its page still shows it
    alive["gone"] = False  # the tab was closed
    assert registry.get("here") is here and registry.get("gone") is None


def test_names_are_slugified_and_never_overwrite(tmp_path):
    assert slugify("  Été / ../../etc/passwd ") == "Ete-etc-passwd"
    with pytest.raises(ValueError, match="no ASCII letters"):
        slugify("../..")
    (tmp_path / "taken.safetensors").write_bytes(b"")
    registry = JobRegistry(max_jobs=1)
    job = registry.submit("s1", tiny_recipe("taken", epochs=1), folder=tmp_path)
    wait(job)
    assert job.snapshot().result_path == tmp_path / "taken-2.safetensors"


def test_two_concurrent_trainings_with_one_name_keep_both(models):
    registry = JobRegistry(max_jobs=2)
    first = registry.submit("s1", tiny_recipe("same", epochs=2), folder=models)
    second = registry.submit("s2", tiny_recipe("same", epochs=1), folder=models)
    wait(first)
    wait(second)
    paths = {first.snapshot().result_path, second.snapshot().result_path}
    assert paths == {models / "same.safetensors", models / "same-2.safetensors"}
    assert all(p.is_file() for p in paths)
    assert not list((models / files.STAGING).glob("*.lock"))  # reservations released


def test_an_unwritable_models_folder_is_a_message_not_a_crash(tmp_path, monkeypatch):
    from attnviz.errors import ConfigError

    (tmp_path / "file").write_bytes(b"")  # a folder under a file: no one, root included, can write there
    registry = JobRegistry(max_jobs=1)
    message = r"cannot reserve a model name in .*file/models \(Not a directory\); make the folder writable"
    with pytest.raises(ConfigError, match=message):
        registry.submit("s1", tiny_recipe("m"), folder=tmp_path / "file" / "models")
    with pytest.raises(ConfigError, match="cannot reserve a model name"):
        registry.submit("s1", tiny_recipe("m"), folder=tmp_path / "file" / "models", resume="m")
    assert registry.active() == []


def test_a_failed_save_fails_the_job_with_one_line(tmp_path, monkeypatch):
    from safetensors import SafetensorError

    from attnviz.training import recipes

    def full(*args, **kwargs):
        raise SafetensorError('Error while serializing: IoError(Os { code: 28, kind: StorageFull,\n msg: "No space" })')

    monkeypatch.setattr(recipes, "save", full)
    job = JobRegistry(max_jobs=1).submit("s1", tiny_recipe("m", epochs=1), folder=tmp_path)
    wait(job)
    snap = job.snapshot()
    staging = tmp_path / ".training" / "m.safetensors"
    assert snap.status == FAILED and snap.error.startswith(f"could not write {staging} (")
    assert "StorageFull" in snap.error and "\n" not in snap.error
