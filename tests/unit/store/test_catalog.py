"""The catalog: names resolved and paths confined to the model folders; dangling links, link loops
and links out of the folder skipped or refused; a model trained on an upload hides it from other
sessions."""

from __future__ import annotations

import json

import pytest

from attnviz.errors import CheckpointError, ConfigError
from attnviz.evaluation.evaluate import measured_on
from attnviz.server.jobs import DONE, JobRegistry
from attnviz.store import catalog
from attnviz.store.checkpoint import drop_owner, load_checkpoint, read_header, save
from attnviz.training.recipes import Recipe
from tests.support.cli import run
from tests.support.jobs import tiny_recipe, wait
from tests.support.tiny import tiny_translator


def test_a_dangling_symlink_is_skipped_with_a_warning(capsys, models, model_file, tmp_path):
    (models / "dangling.safetensors").symlink_to(tmp_path / "nowhere.safetensors")
    with pytest.warns(catalog.ModelWarning, match="dangling"):
        names = [m.name for m in catalog.list_models()]
    assert "good" in names and "dangling" not in names
    code, out, err = run(capsys, "list")
    assert code == 0 and "good" in out and "warning: skipped dangling.safetensors" in err


def test_a_model_of_a_score_this_attnviz_lacks_is_skipped_saying_which(
    capsys, corpus, models, model_file, gain_dot, monkeypatch
):
    """A checkpoint of a newer or extended attnviz (a score it registers, this one does not): listed
    nowhere, one warning naming the score; opened by path, the same message, not "choose one of"."""
    path = save(tiny_translator(corpus, score=gain_dot), models / "newer.safetensors")
    monkeypatch.delitem(catalog_scores(), gain_dot)
    said = "the model uses the score function 'gain_dot', which this attnviz does not have (it has additive,"
    with pytest.warns(catalog.ModelWarning, match="skipped newer.safetensors: the model uses the score function"):
        names = [m.name for m in catalog.list_models()]
    assert "good" in names and "newer" not in names
    with pytest.raises(CheckpointError, match="which this attnviz does not have") as e:
        load_checkpoint(path)
    assert said in str(e.value) and "choose one of" not in str(e.value)
    code, _, err = run(capsys, "translate", "--model", str(path), "a b")
    assert code == 2 and said in err and "Traceback" not in err


def test_a_damaged_model_named_by_name_says_what_is_wrong_with_its_file(capsys, models, model_file):
    """A save or copy cut short: the listing skips the file, and asking for it by name said "no model named
    'trunc'", as if it were not there; it says the file's own fault and the way on."""
    (models / "trunc.safetensors").write_bytes(model_file.read_bytes()[:5000])
    (models / "empty.safetensors").write_bytes(b"")
    code, _, err = run(capsys, "translate", "--model", "trunc", "a b")
    assert code == 2 and "trunc.safetensors is not a readable safetensors file (corrupt or truncated)" in err
    assert err.rstrip().endswith("; copy the file again, or train it again") and "no model named" not in err
    with pytest.raises(CheckpointError, match=r"empty\.safetensors is empty; it is not a checkpoint"):
        catalog.resolve("empty")
    with pytest.raises(CheckpointError, match="no model named 'absent'"):
        catalog.resolve("absent")


def catalog_scores() -> dict:
    from attnviz.model.scores import SCORES

    return SCORES


def test_a_models_setting_that_names_a_file_is_said_not_passed_over(capsys, models, monkeypatch):
    (models / "afile").write_text("not a folder")
    monkeypatch.setenv("ATTNVIZ_MODELS", str(models / "afile"))
    with pytest.warns(catalog.ModelWarning, match="is a file, not a folder"):
        assert catalog.list_models()  # the shipped models are still listed
    code, out, err = run(capsys, "list")
    assert code == 0 and "toy-fr-dot-luong" in out and "point ATTNVIZ_MODELS at a folder" in err
    code, _, err = run(capsys, "train", "--data", "copy", "--emb", "8", "--hidden", "8", "--attn", "8", "--name", "x")
    assert code == 2 and "is a file, not a folder; choose another --out, or point ATTNVIZ_MODELS at" in err


def test_a_link_loop_and_a_dangling_link_inside_the_folder_are_skipped(capsys, models, model_file):
    (models / "loop.safetensors").symlink_to(models / "loop.safetensors")  # a link to itself
    (models / "gone.safetensors").symlink_to(models / "deleted.safetensors")  # inside the folder, missing
    with pytest.warns(catalog.ModelWarning) as seen:
        names = [m.name for m in catalog.list_models()]
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
        assert "secret" not in [m.name for m in catalog.list_models()]
    with pytest.raises(CheckpointError):
        catalog.load("secret", roots=catalog.model_roots())
    with pytest.raises(CheckpointError, match="outside the model folders"):
        catalog.load(str(models / "secret.safetensors"), roots=catalog.model_roots())


def test_models_trained_on_uploads_are_private_to_their_session_until_shared(models, tmp_path):
    upload = tmp_path / "upload.tsv"
    upload.write_text("en\tde\n" + "".join(f"secret {i} row\tgeheim {i}\n" for i in range(40)), encoding="utf-8")
    registry = JobRegistry(max_jobs=1)
    on_upload = {"data": f"{upload}?src=en&tgt=de", "data_options": {}}
    rec = Recipe(**{**tiny_recipe("private", epochs=1).to_dict(), **on_upload})
    job = registry.submit("owner-session", rec, folder=models)
    wait(job)
    assert job.snapshot().status == DONE, job.snapshot().error
    assert load_checkpoint(job.snapshot().result_path).meta["owner"] == "owner-session"

    def entry(viewer):
        return next((m for m in catalog.list_models(viewer=viewer) if m.name == "private"), None)

    assert "secret" in entry("owner-session").example and str(upload) in entry("owner-session").task
    assert entry("someone-else") is None  # another session does not list it: its words are the upload's
    hidden = entry(None)  # the CLI (no session) lists it without its private parts
    assert hidden.example is None and str(upload) not in json.dumps(hidden.to_dict())
    # the loaded model's meta, as the app's pages read it (Compare's test pairs, Learn's example)
    meta = load_checkpoint(job.snapshot().result_path).meta
    assert catalog.shareable_meta(meta, "owner-session") is meta
    shared = catalog.shareable_meta(meta, "someone-else")
    assert "secret" not in json.dumps(shared) and str(upload) not in json.dumps(shared)
    with pytest.raises(ConfigError, match="private"):
        measured_on(shared)
    with pytest.raises(ConfigError, match="--data"):  # a checkpoint's stored path is never read back
        measured_on(meta)
    # sharing: only its owner may, and then every session lists it
    path = job.snapshot().result_path
    with pytest.raises(CheckpointError, match="another session"):
        drop_owner(path, "someone-else")
    assert entry("someone-else") is None
    before = {k: v.dtype for k, v in load_checkpoint(path).model.state_dict().items()}
    drop_owner(path, "owner-session")
    assert entry("someone-else").example == entry("owner-session").example
    assert "owner" not in load_checkpoint(path).meta
    assert {k: v.dtype for k, v in load_checkpoint(path).model.state_dict().items()} == before


def test_sharing_keeps_half_precision_weights_half(corpus, models):
    tr = tiny_translator(corpus)
    tr.meta.update({"owner": "me", "example": "a b c"})
    path = save(tr, models / "half.safetensors", store="fp16")
    size = path.stat().st_size
    drop_owner(path, "me")
    assert "owner" not in read_header(path)["meta"] and abs(path.stat().st_size - size) < 200


def test_catalog_resolves_names_and_confines_paths(saved, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNVIZ_MODELS", str(tmp_path))
    names = [m.name for m in catalog.list_models()]
    assert "m" in names
    assert catalog.load("m").config.score == "local_p"
    with pytest.raises(CheckpointError, match="outside the model folders"):
        catalog.resolve("/etc/passwd", roots=[tmp_path])
    with pytest.raises(CheckpointError, match=r"no model named 'no-such-model' .*; known models: "):
        catalog.resolve("no-such-model")
    (tmp_path / "my-model.safetensors").write_bytes(saved[1].read_bytes())
    with pytest.raises(CheckpointError, match=r"no model named 'my-modl' .*; did you mean my-model\?"):
        catalog.resolve("my-modl")  # a near miss names the models it is close to
