"""Checkpoints uploaded in the browser: checked as the CLI checks them, private to their session,
freed when it ends, saved into the models folder under a reserved name, never overwriting."""

from __future__ import annotations

import json
import pickle
import tempfile
from pathlib import Path

import pytest

from attnviz.errors import AttnvizError, CheckpointError, ConfigError
from attnviz.server import checkpoints, upload_folder, upload_ledger
from attnviz.store import list_models, load
from attnviz.store.checkpoint import save
from tests.support.checkpoints import rewrite
from tests.support.tiny import tiny_translator
from tests.support.uploads import use_fresh_uploads

ALIVE = lambda: True  # noqa: E731


@pytest.fixture(autouse=True)
def fresh(tmp_path, monkeypatch) -> Path:
    """Uploads, their ledger and the uploaded checkpoints in a temporary folder; an empty models folder."""
    use_fresh_uploads(tmp_path / "uploads", monkeypatch, checkpoint_uploads=True)
    (tmp_path / "models").mkdir()
    monkeypatch.setenv("ATTNVIZ_MODELS", str(tmp_path / "models"))
    yield tmp_path
    upload_folder.server_folder.cache_clear()


@pytest.fixture
def good(corpus, tmp_path) -> Path:
    tr = tiny_translator(corpus)
    tr.meta.update({"task": "reverse", "example": "a b c"})
    return save(tr, tmp_path / "mine.safetensors")


def kept() -> list[Path]:
    """What the checkpoint folder holds (temporary checking folders included)."""
    return sorted(checkpoints.checkpoint_folder().iterdir())


def test_an_upload_is_listed_and_loaded_by_its_session_only(good):
    entry = checkpoints.store_checkpoint(good.read_bytes(), "mine.safetensors", "a", ALIVE)
    assert entry.name == "mine" and entry.source == "uploaded" and entry.owner == "a"
    assert (entry.task, entry.score, entry.style, entry.example) == ("reverse", "additive", "bahdanau", "a b c")
    assert checkpoints.session_checkpoints("a") == [entry]
    model = checkpoints.uploaded_model("a", entry.path)
    assert model.text_of(model.translate("a b c")) is not None
    assert checkpoints.session_checkpoints("b") == []
    assert checkpoints.uploaded_model("b", entry.path) is None
    assert "mine" not in [m.name for m in list_models(viewer="b")]  # not in the models folder
    assert kept() == [Path(entry.path)]  # no temporary folder left


def test_a_name_taken_by_a_model_or_another_upload_gets_uploaded_added(good, corpus, tmp_path):
    first = checkpoints.store_checkpoint(good.read_bytes(), "mine.safetensors", "a", ALIVE, taken={"mine"})
    other = save(tiny_translator(corpus, score="dot", style="luong"), tmp_path / "x.safetensors")
    second = checkpoints.store_checkpoint(other.read_bytes(), "mine.safetensors", "a", ALIVE, taken={"mine"})
    assert (first.name, second.name) == ("mine-uploaded", "mine-uploaded-2")
    again = checkpoints.store_checkpoint(good.read_bytes(), "copy.safetensors", "a", ALIVE)
    assert again == first and len(checkpoints.session_checkpoints("a")) == 2  # the same bytes: one upload


def broken(good: Path, tmp_path: Path) -> dict[str, tuple[bytes, str]]:
    """Files the CLI refuses, as (bytes, uploaded name) by case; each message names the file and says what is wrong."""

    def edited(**kw) -> bytes:
        return rewrite(good, tmp_path / "edited.safetensors", **kw).read_bytes()

    def nan(index: dict) -> None:
        name = next(k for k in index if k != "__metadata__")
        index[name]["dtype"] = "F32"

    raw = good.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    index = json.loads(raw[8 : 8 + n])
    first = next(k for k in index if k != "__metadata__")
    start, _ = index[first]["data_offsets"]
    nan_bytes = bytearray(raw)
    nan_bytes[8 + n + start : 8 + n + start + 4] = b"\x00\x00\xc0\x7f"  # float32 NaN
    return {
        "not a safetensors file": (b"hello world, not a model at all", "notes.safetensors"),
        "pickle": (pickle.dumps({"weights": [1, 2]}), "model.pt"),
        "a zip": (b"PK\x03\x04" + raw[4:], "model.zip"),
        "truncated": (raw[: len(raw) // 2], "half.safetensors"),
        "meta a list": (edited(attnviz=lambda h: {**h, "meta": [1, 2]}), "listmeta.safetensors"),
        "config a string": (edited(attnviz=lambda h: {**h, "config": "big"}), "strconfig.safetensors"),
        "wrong shape": (
            edited(attnviz=lambda h: {**h, "config": {**h["config"], "hidden_dim": 7}}),
            "shape.safetensors",
        ),
        "relabelled dtype": (edited(tensors=lambda ix: ix[first].update(dtype="I32")), "dtype.safetensors"),
        "NaN weights": (bytes(nan_bytes), "nan.safetensors"),
    }


def test_every_file_the_cli_refuses_is_refused_with_its_name_and_nothing_is_kept(good, tmp_path, monkeypatch):
    models = tmp_path / "models"
    (models / "mine.safetensors").write_bytes(b"the user's own file")
    for case, (data, name) in broken(good, tmp_path).items():
        path = tmp_path / "cli" / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        with pytest.raises(AttnvizError) as cli:  # what `attnviz translate --model FILE` says
            load(str(path))
        with pytest.raises(CheckpointError) as app:
            checkpoints.store_checkpoint(data, name, "a", ALIVE)
        message = str(app.value)
        assert message.startswith(Path(name).stem), (case, message)
        assert message == str(cli.value), case  # the same check, the same words
        assert kept() == [], case
    assert checkpoints.session_checkpoints("a") == []
    assert (models / "mine.safetensors").read_bytes() == b"the user's own file"
    monkeypatch.setattr(checkpoints, "MAX_CHECKPOINT_UPLOAD_MB", 0)
    with pytest.raises(CheckpointError, match="at most 0 MiB"):
        checkpoints.store_checkpoint(good.read_bytes(), "mine.safetensors", "a", ALIVE)


def test_a_session_holds_a_few_checkpoints_at_most(good, corpus, tmp_path, monkeypatch):
    monkeypatch.setattr(checkpoints, "MAX_CHECKPOINTS_PER_SESSION", 1)
    checkpoints.store_checkpoint(good.read_bytes(), "mine.safetensors", "a", ALIVE)
    other = save(tiny_translator(corpus, score="dot", style="luong"), tmp_path / "x.safetensors")
    with pytest.raises(ConfigError, match="remove one"):
        checkpoints.store_checkpoint(other.read_bytes(), "x.safetensors", "a", ALIVE)
    checkpoints.store_checkpoint(other.read_bytes(), "x.safetensors", "b", ALIVE)  # another session's own quota


def test_an_upload_is_freed_when_its_session_ends_or_removes_it(good):
    alive = {"a": True, "b": True}
    a = checkpoints.store_checkpoint(good.read_bytes(), "mine.safetensors", "a", lambda: alive["a"])
    b = checkpoints.store_checkpoint(good.read_bytes(), "theirs.safetensors", "b", lambda: alive["b"])
    assert a.path == b.path  # the same bytes are stored once
    alive["a"] = False
    upload_ledger.collect()  # the janitor's round
    assert checkpoints.session_checkpoints("a") == [] and checkpoints.uploaded_model("a", a.path) is None
    assert Path(b.path).is_file() and checkpoints.uploaded_model("b", b.path) is not None
    checkpoints.remove_checkpoint("b", b.path)
    assert not Path(b.path).exists() and checkpoints.UPLOADS._models == {}
    assert checkpoints.session_checkpoints("b") == []


def test_saving_copies_into_the_models_folder_under_a_free_name_never_overwriting(good, tmp_path):
    models = tmp_path / "models"
    (models / "mine.safetensors").write_bytes(b"an older model of the same name")
    entry = checkpoints.store_checkpoint(good.read_bytes(), "mine.safetensors", "a", ALIVE)
    with pytest.raises(ConfigError, match="gone"):
        checkpoints.save_checkpoint("b", entry.path, "mine")  # not b's upload
    saved = checkpoints.save_checkpoint("a", entry.path, "mine")
    assert saved == models / "mine-2.safetensors" and saved.read_bytes() == good.read_bytes()
    assert (models / "mine.safetensors").read_bytes() == b"an older model of the same name"
    assert checkpoints.session_checkpoints("a") == [] and not Path(entry.path).exists()  # released
    assert [p.name for p in models.iterdir() if p.name.startswith(".")] in ([], [".training"])  # no temp file
    with pytest.warns(Warning):  # the user's broken "mine.safetensors" is skipped with a warning
        names = [m.name for m in list_models(viewer="b")]
    assert "mine-2" in names  # every session lists the saved model


def test_an_upload_the_server_cannot_store_is_refused_naming_no_server_path(good, monkeypatch):
    def full_disk(self, data):
        raise OSError(28, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_bytes", full_disk)
    with pytest.raises(CheckpointError) as said:
        checkpoints.store_checkpoint(good.read_bytes(), "mine.safetensors", "a", ALIVE)
    assert str(said.value) == (
        "mine.safetensors: the server could not store the upload (No space left on device); try again later"
    )
    assert kept() == []  # no temporary folder left


def test_a_refused_upload_names_no_server_path(monkeypatch):
    def leaky(path):
        raise CheckpointError(f"{path.name}: cannot read {path} (see {path.parent}/log.txt).")

    monkeypatch.setattr(checkpoints, "load_checkpoint", leaky)
    with pytest.raises(CheckpointError) as said:
        checkpoints.store_checkpoint(b"x", "mine.safetensors", "a", ALIVE)
    assert str(said.value) == (
        "mine.safetensors: cannot read the server's upload folder (see the server's upload folder)."
    )


def test_server_paths_become_the_folders_description(fresh, monkeypatch):
    root, models = str(upload_folder.UPLOAD_ROOT), str(fresh / "models")
    said = checkpoints.without_server_paths
    assert said(f"'{root}/server-1/x.safetensors'") == "'the server's upload folder'"
    assert said(f"cannot save into {models} (read-only)") == "cannot save into the models folder (read-only)"
    temp = tempfile.gettempdir()
    assert said(f"{temp}/a/b.txt.") == "the server's temporary folder."
    assert said(f"{temp}-old/x and /usr/share/x") == f"{temp}-old/x and /usr/share/x"  # not inside them


@pytest.mark.parametrize(("name", "stem"), [("../evil", "evil"), ("a/b", "a-b"), ("my model!", "my-model")])
def test_a_saved_upload_lands_in_the_models_folder_under_a_safe_name(good, fresh, name, stem):
    entry = checkpoints.store_checkpoint(good.read_bytes(), "mine.safetensors", "a", ALIVE)
    saved = checkpoints.save_checkpoint("a", entry.path, name)  # the text typed in "Save as"
    assert saved == fresh / "models" / f"{stem}.safetensors" and saved.read_bytes() == good.read_bytes()
    assert not (fresh / "evil.safetensors").exists()


def test_an_upload_over_the_size_limit_is_refused_by_its_size(monkeypatch):
    monkeypatch.setattr(checkpoints, "MAX_CHECKPOINT_UPLOAD_MB", 1)
    with pytest.raises(CheckpointError, match="2 MiB; uploaded checkpoints may hold at most 1 MiB"):
        checkpoints.store_checkpoint(b"\0" * (3 * 2**19), "mine.safetensors", "a", ALIVE)  # 1.5 MiB
