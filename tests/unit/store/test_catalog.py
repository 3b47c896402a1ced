"""Security review fixes: output paths, name reservations, stranded runs, temporary files,
batch evaluation, broken model folders, checkpoint validation, CLI errors, upload privacy."""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from attnviz.cli.main import main
from attnviz.errors import CheckpointError, ConfigError
from attnviz.evaluation.evaluate import evaluate_checkpoints, measured_on
from attnviz.server import stranded
from attnviz.server.jobs import DONE, JobRegistry
from attnviz.store import catalog, files, pretrained_dir
from attnviz.store.checkpoint import load_checkpoint, save
from attnviz.training import recipes as recipe
from attnviz.training.recipes import Recipe
from tests.support.cli import run
from tests.support.jobs import stranded_run, tiny_recipe, wait
from tests.support.tiny import tiny_translator


@pytest.fixture
def no_training(monkeypatch):
    """Record where the CLI would train to, without training."""
    calls = []

    def fake(recipe, out=None, *args, **kwargs):
        calls.append((recipe, Path(out)))
        return SimpleNamespace(meta={"metrics": {}, "train_seconds": 0.0})

    monkeypatch.setattr(recipe, "run_recipe", fake)
    return calls


def rewrite_header(path: Path, edit) -> None:
    """Rewrite a checkpoint with ``edit(header)`` applied to its attnviz header, same tensors."""
    with safe_open(str(path), framework="pt") as f:
        header = json.loads(f.metadata()["attnviz"])
    edit(header)
    save_file(load_file(str(path)), str(path), metadata={"attnviz": json.dumps(header)})


# 1. output paths


def test_train_names_are_slugs_never_paths(capsys, models, no_training):
    for name in ("../pretrained/toy-fr-dot-luong", "/abs/path/x"):
        code, _, err = run(capsys, "train", "--data", "reverse", "--name", name, "--quiet")
        assert code == 0, err
    assert [out for _, out in no_training] == [
        models / "pretrained-toy-fr-dot-luong.safetensors",
        models / "abs-path-x.safetensors",
    ]
    assert no_training[0][0].name == "pretrained-toy-fr-dot-luong"


def test_train_refuses_bad_outputs_before_training(capsys, models, no_training):
    shipped = pretrained_dir() / "toy-fr-dot-luong.safetensors"
    before = shipped.stat().st_mtime_ns
    (models / "taken.safetensors").write_bytes(b"x")
    cases = [
        (["--out", str(shipped), "--force"], "pretrained"),
        (["--out", "../" * 0 + str(pretrained_dir() / "new.safetensors")], "pretrained"),
        (["--name", "taken"], "already exists"),
        (["--out", str(models / "taken.safetensors")], "already exists"),
        (["--out", "model.pt"], "safetensors"),
        (["--out", str(models / "taken.safetensors" / "x.safetensors")], "is a file"),
        (["--resume", "--name", "taken"], "no unfinished training"),
    ]
    for flags, message in cases:
        code, _, err = run(capsys, "train", "--data", "reverse", "--quiet", *flags)
        assert code == 2 and message in err and err.count("\n") == 1, (flags, err)
    assert not no_training and shipped.stat().st_mtime_ns == before
    code, _, err = run(capsys, "train", "--data", "reverse", "--quiet", "--name", "taken", "--force")
    assert code == 0 and no_training[-1][1] == models / "taken.safetensors"


# 2. two trainings with one name


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


def test_a_dead_reservation_frees_its_name(models):
    (models / files.STAGING).mkdir()
    (models / files.STAGING / "free.lock").write_text("")  # left by a killed server: nobody holds it
    out, fd = files.reserve_name(models, "free")
    assert out == models / "free.safetensors"
    assert files.reserve_name(models, "free")[0] == models / "free-2.safetensors"  # now held
    files.release_lock(models / files.STAGING / "free.lock", fd)


# 3. stranded runs


def test_stranded_runs_are_listed_kept_resumed_and_discarded(models):
    path = stranded_run(models)
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
    assert snap.result_path == models / "cut.safetensors" and not path.exists()

    kept = stranded_run(models, "other")
    assert stranded.keep_stranded("other", models) == models / "other.safetensors"
    assert not kept.exists() and load_checkpoint(models / "other.safetensors").meta["progress"]["epoch"] == 1

    gone = stranded_run(models, "gone")
    stranded.discard_stranded("gone", models)
    assert not gone.exists() and stranded.stranded_runs(models) == []
    with pytest.raises(ConfigError, match="no unfinished training"):
        stranded.keep_stranded("gone", models)


# 4. temporary files


def test_save_removes_stale_temporary_files_only(corpus, models):
    old, fresh, busy = (models / f".m.safetensors.{k}.tmp" for k in ("old", "fresh", "busy"))
    for path in (old, fresh, busy):
        path.write_bytes(b"partial")
    hour_ago = time.time() - 3600
    os.utime(old, (hour_ago, hour_ago))
    os.utime(busy, (hour_ago, hour_ago))
    with open(busy) as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # a live save writing it
        save(tiny_translator(corpus), models / "m.safetensors")
    assert not old.exists() and fresh.exists() and busy.exists()
    assert files.clean_stale_temp(models, max_age=0) == [] or not busy.exists()


# 5. evaluating several checkpoints


def test_a_broken_checkpoint_does_not_lose_the_other_rows(capsys, models, model_file):
    broken = models / "broken.safetensors"
    broken.write_bytes(model_file.read_bytes()[:300])
    done = evaluate_checkpoints(["good", str(broken), str(model_file)], n=4)
    assert [r["model"] for r in done.rows] == ["good", str(model_file)]
    assert [e["model"] for e in done.errors] == [str(broken)] and "corrupt" in done.errors[0]["error"]

    code, out, err = run(capsys, "evaluate", "--model", "good", "--model", "broken", "--model", "good", "--n", "4")
    assert code == 2 and out.count("bleu:") == 2  # both good rows printed
    assert err.count("\n") == 1 and "broken" in err
    code, out, _ = run(capsys, "evaluate", "--model", "good", "--n", "4", "--json")
    assert code == 0 and json.loads(out)["n"] == 4


# 6. broken model folders


def test_a_dangling_symlink_is_skipped_with_a_warning(capsys, models, model_file, tmp_path):
    (models / "dangling.safetensors").symlink_to(tmp_path / "nowhere.safetensors")
    with pytest.warns(catalog.ModelWarning, match="dangling"):
        names = [m["name"] for m in catalog.list_models()]
    assert "good" in names and "dangling" not in names
    code, out, err = run(capsys, "list")
    assert code == 0 and "good" in out and "warning: skipped dangling.safetensors" in err


def test_a_link_loop_and_a_dangling_link_inside_the_folder_are_skipped(capsys, models, model_file):
    (models / "loop.safetensors").symlink_to(models / "loop.safetensors")  # a link to itself
    (models / "gone.safetensors").symlink_to(models / "deleted.safetensors")  # inside the folder, missing
    with pytest.warns(catalog.ModelWarning) as seen:
        names = [m["name"] for m in catalog.list_models()]
    assert "good" in names and "loop" not in names and "gone" not in names
    assert any("loop.safetensors" in str(w.message) for w in seen)
    assert any("gone.safetensors" in str(w.message) for w in seen)
    with pytest.raises(CheckpointError, match="symlink loop"):
        catalog.load(str(models / "loop.safetensors"), roots=catalog.model_roots())
    code, out, err = run(capsys, "list")
    assert code == 0 and "good" in out and "Traceback" not in err


def test_a_symlink_out_of_the_folder_is_refused_by_name(models, model_file, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    target = outside / "secret.safetensors"
    target.write_bytes(model_file.read_bytes())
    (models / "secret.safetensors").symlink_to(target)
    with pytest.warns(catalog.ModelWarning, match="outside"):
        assert "secret" not in [m["name"] for m in catalog.list_models()]
    with pytest.raises(CheckpointError):
        catalog.load("secret", roots=catalog.model_roots())
    with pytest.raises(CheckpointError, match="outside the model folders"):
        catalog.load(str(models / "secret.safetensors"), roots=catalog.model_roots())


# 7 and 8. checkpoint validation


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda h: h["config"].update(hidden_dim=True), "hidden_dim must be a whole number"),
        (lambda h: h["config"].update(dropout="0.1"), "dropout must be a number"),
        (lambda h: h["config"].update(hidden_dim=8000), "has shape"),
        (lambda h: h.update(src_tokenizer=7), "good.safetensors: "),
    ],
)
def test_bad_configs_are_refused_before_building_the_model(model_file, monkeypatch, edit, message):
    rewrite_header(model_file, edit)
    import attnviz.store.checkpoint as checkpoint

    real = checkpoint.Seq2Seq

    def only_on_meta(cfg):  # the real model must not be allocated for a bad file
        assert torch.empty(0).device.type == "meta", "a model was allocated before the shapes were checked"
        return real(cfg)

    monkeypatch.setattr(checkpoint, "Seq2Seq", only_on_meta)
    start = time.perf_counter()
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(model_file)
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_weights_are_refused(corpus, models, value):
    tr = tiny_translator(corpus)
    with torch.no_grad():
        next(iter(tr.model.parameters()))[0, 0] = value
    path = save(tr, models / "nan.safetensors")
    with pytest.raises(CheckpointError, match="NaN or infinite"):
        load_checkpoint(path)


# 9. CLI errors


@pytest.mark.parametrize(
    "error",
    [
        RuntimeError("[enforce fail at alloc_cpu.cpp:127] DefaultCPUAllocator: can't allocate memory: 6553600000"),
        MemoryError(),
        torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB"),
    ],
)
def test_out_of_memory_is_one_line_and_exit_2(capsys, monkeypatch, error):
    from attnviz.cli import bench

    def boom(**kwargs):
        raise error

    monkeypatch.setattr(bench, "run_bench", boom)
    code, _, err = run(capsys, "bench", "--hidden", "4096", "--emb", "4096", "--batch", "4096")
    assert code == 2 and err.count("\n") == 1 and "out of memory" in err and "smaller" in err


def test_other_runtime_errors_still_show_the_bug(monkeypatch):
    from attnviz.cli import bench

    monkeypatch.setattr(bench, "run_bench", lambda **kw: (_ for _ in ()).throw(RuntimeError("a bug")))
    with pytest.raises(RuntimeError, match="a bug"):
        main(["bench"])


def test_device_meta_is_refused(capsys, models):
    code, _, err = run(capsys, "train", "--data", "reverse", "--device", "meta", "--quiet", "--n-train", "20")
    assert code == 2 and err.count("\n") == 1 and "meta" in err


# 11. privacy between sessions


def test_models_trained_on_uploads_hide_their_example_from_other_sessions(models, tmp_path):
    upload = tmp_path / "upload.tsv"
    upload.write_text("en\tde\n" + "".join(f"secret {i} row\tgeheim {i}\n" for i in range(40)), encoding="utf-8")
    registry = JobRegistry(max_jobs=1)
    rec = Recipe(**{**tiny_recipe("private", epochs=1).to_dict(), "data": f"{upload}?src=en&tgt=de",
                    "data_options": {}})  # fmt: skip
    job = registry.submit("owner-session", rec, folder=models)
    wait(job)
    assert job.snapshot().status == DONE, job.snapshot().error
    assert load_checkpoint(job.snapshot().result_path).meta["owner"] == "owner-session"

    def entry(viewer):
        return next(m for m in catalog.list_models(viewer=viewer) if m["name"] == "private")

    assert "secret" in entry("owner-session")["example"] and str(upload) in entry("owner-session")["task"]
    for viewer in ("someone-else", None):  # None: a caller that names no session sees no private parts
        hidden = entry(viewer)
        assert hidden["example"] is None and str(upload) not in json.dumps(hidden)
    # the loaded model's meta, as the app's pages read it (Compare's test pairs, Learn's example)
    meta = load_checkpoint(job.snapshot().result_path).meta
    assert catalog.shareable_meta(meta, "owner-session") is meta
    shared = catalog.shareable_meta(meta, "someone-else")
    assert "secret" not in json.dumps(shared) and str(upload) not in json.dumps(shared)
    with pytest.raises(ConfigError, match="private"):
        measured_on(shared)
    assert measured_on(meta)[0] == f"{upload}?src=en&tgt=de"
