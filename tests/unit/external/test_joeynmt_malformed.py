"""Malformed JoeyNMT uploads, as a folder through ``attnviz import-joeynmt`` and as the zip the app's
Yours panel takes: a config that is not YAML or has no ``model`` section, a ``.ckpt`` without a
``model_state`` of tensors, a weight missing or of the wrong shape, specials at other ids than the
config says, sizes attnviz cannot build, a vocabulary that is not UTF-8 and a zip that unpacks too
large. Each ends in one CheckpointError (one line and exit 2 on the command line) that names the
problem, and nothing is written to the models folder."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
import torch
import yaml

from attnviz.errors import CheckpointError
from attnviz.external import import_joeynmt_files, import_joeynmt_zip
from attnviz.external import joeynmt as joeynmt_module
from tests.support.cli import run
from tests.support.joeynmt_files import joey_config, write_joey_folder


def _edit_state(folder: Path, change) -> None:
    ckpt = torch.load(folder / "best.ckpt", weights_only=True)
    change(ckpt["model_state"])
    torch.save(ckpt, folder / "best.ckpt")


def _set_sizes(cfg: dict, hidden: int) -> dict:
    for side in ("encoder", "decoder"):
        cfg["model"][side]["hidden_size"] = hidden
    return cfg


def _set_layers(cfg: dict, side: str, layers: object) -> dict:
    cfg["model"][side]["num_layers"] = layers
    return cfg


def _bad_specials(folder: Path) -> None:
    cfg = joey_config()
    cfg["data"]["special_symbols"] = {"unk_id": 3}  # JoeyNMT puts <unk> first, at id 0
    (folder / "config.yaml").write_text(yaml.safe_dump(cfg))


MALFORMED = {
    "config not YAML": (
        lambda f: (f / "config.yaml").write_text("model: [encoder, {decoder\n"),
        "config.yaml: not valid YAML",
    ),
    "no model section": (
        lambda f: (f / "config.yaml").write_text(yaml.safe_dump({"name": "tiny", "data": {}})),
        "not a JoeyNMT config (no 'model' section); give the config.yaml of the model",
    ),
    "ckpt without model_state of tensors": (
        lambda f: torch.save({"model_state": {"src_embed.lut.weight": [1.0, 2.0]}}, f / "best.ckpt"),
        "no model_state of tensors; give the .ckpt JoeyNMT saved (best.ckpt)",
    ),
    "ckpt of a list": (
        lambda f: torch.save([torch.zeros(2)], f / "best.ckpt"),
        "no model_state of tensors",
    ),
    "specials at other ids": (
        _bad_specials,
        "the vocabulary does not put '<unk>' at id 3 as the config's unk_id says: give the vocabulary file the model",
    ),
    "sizes attnviz rejects": (
        lambda f: (f / "config.yaml").write_text(yaml.safe_dump(_set_sizes(joey_config(), 0))),
        "the config's model sizes do not fit attnviz: model.decoder.hidden_size must be between 1 and 100000, got 0",
    ),
    "layers attnviz rejects": (
        lambda f: (f / "config.yaml").write_text(yaml.safe_dump(_set_layers(joey_config(), "encoder", 17))),
        "the config's model sizes do not fit attnviz: model.encoder.num_layers must be between 1 and 16, got 17",
    ),
    "missing weight": (
        lambda f: _edit_state(f, lambda s: s.pop("decoder.output_layer.weight")),
        "the checkpoint has no decoder.output_layer.weight; it is not the model this config describes: give the "
        "config.yaml and the .ckpt of one training",
    ),
    "a weight of no place": (
        lambda f: _edit_state(f, lambda s: s.update({"decoder.foo.weight": torch.zeros(2)})),
        "the checkpoint holds decoder.foo.weight, which this config's model has no place for: give the config.yaml",
    ),
    "weight of the wrong shape": (
        lambda f: _edit_state(f, lambda s: s.update({"decoder.bridge_layer.weight": torch.zeros(16, 16)})),
        "the checkpoint's decoder.bridge_layer.weight does not fit the model its config describes",
    ),
}


def _zip(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(folder.iterdir()):
            z.write(path, f"{folder.name}/{path.name}")
    return buffer.getvalue()


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_folder_is_one_line_and_nothing_is_saved(tmp_path, capsys, models, case):
    change, message = MALFORMED[case]
    folder = write_joey_folder(tmp_path / "upload")
    change(folder)
    code, out, err = run(capsys, "import-joeynmt", str(folder), "--out", "mine")
    assert code == 2 and not out and len(err.strip().splitlines()) == 1, err
    assert message in err and "Traceback" not in err
    assert not list(models.iterdir())


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_zip_is_one_checkpoint_error_naming_the_problem(tmp_path, models, case):
    change, message = MALFORMED[case]
    folder = write_joey_folder(tmp_path / "upload")
    change(folder)
    with pytest.raises(CheckpointError) as info:
        import_joeynmt_zip(_zip(folder), "upload.zip")
    assert message in str(info.value) and "\n" not in str(info.value)
    assert not list(models.iterdir())


def test_a_zip_whose_vocabulary_is_not_utf8_says_so(tmp_path, models):
    folder = write_joey_folder(tmp_path / "upload")
    (folder / "trg_vocab.txt").write_bytes("<unk>\n<pad>\n<s>\n</s>\nx\nd\xe9j\xe0\n".encode("latin-1"))
    with pytest.raises(CheckpointError, match=r"^upload\.zip: the vocabulary is not UTF-8 text$"):
        import_joeynmt_zip(_zip(folder), "upload.zip")
    assert not list(models.iterdir())


def test_a_zip_that_unpacks_past_the_limit_is_refused_before_unpacking(tmp_path, models, monkeypatch):
    """The sizes the zip declares are added up first: past the limit, nothing is decompressed."""
    folder = write_joey_folder(tmp_path / "upload")
    (folder / "padding.txt").write_bytes(b"\0" * 4096)  # compresses to a few bytes
    monkeypatch.setattr(joeynmt_module, "MAX_CKPT_BYTES", 2**20)
    monkeypatch.setattr(joeynmt_module, "MAX_TEXT_BYTES", 0)
    data = _zip(folder)
    assert len(data) < 2**20
    (folder / "padding.txt").write_bytes(b"\0" * (2**20 + 1))
    with pytest.raises(CheckpointError, match=r"^upload\.zip: its files unpack to more than 1 MB; zip only one model$"):
        import_joeynmt_zip(_zip(folder), "upload.zip")
    assert import_joeynmt_zip(data, "upload.zip").config.cell == "gru"  # under the limit: imported
    assert not list(models.iterdir())


def test_a_weight_of_the_wrong_shape_names_the_checkpoints_key_and_one_shape(tmp_path):
    folder = write_joey_folder(tmp_path / "m")
    ckpt = torch.load(folder / "best.ckpt", weights_only=True)
    ckpt["model_state"]["decoder.bridge_layer.weight"] = torch.zeros(16, 16)
    torch.save(ckpt, folder / "best.ckpt")
    with pytest.raises(CheckpointError) as info:
        import_joeynmt_files(folder)
    assert str(info.value) == (
        "the checkpoint's decoder.bridge_layer.weight does not fit the model its config describes: converted to "
        "attnviz's decoder.bridge.weight it is 16 × 16, where that model needs 16 × 32; give the config the model "
        "was trained with"
    )  # the name the user finds in their .ckpt, not only attnviz's
