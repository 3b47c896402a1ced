"""The JoeyNMT import's checks, vocabularies and command line on model folders written without JoeyNMT
(JoeyNMT's own code is needed only for the attention equality: test_joeynmt.py)."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest
import torch
import yaml

from attnviz.errors import CheckpointError
from attnviz.explain import cell_numbers
from attnviz.external import import_joeynmt_files, import_joeynmt_zip
from attnviz.store import load
from tests.support.cli import run
from tests.support.joeynmt_files import joey_config, write_joey_folder


def test_vocabularies_are_reordered_to_attnvizs_special_ids(tmp_path):
    folder = write_joey_folder(tmp_path / "m", src_words=("b", "a"))
    tr = import_joeynmt_files(folder)
    assert tr.src_vocab.itos == ["<pad>", "<unk>", "<bos>", "<eos>", "b", "a"]
    state = torch.load(folder / "best.ckpt", weights_only=True)["model_state"]
    joey_rows = state["src_embed.lut.weight"]  # JoeyNMT: <unk> 0, <pad> 1, <s> 2, </s> 3, b 4, a 5
    torch.testing.assert_close(tr.model.encoder.embedding.weight[[0, 1, 5]], joey_rows[[1, 0, 5]])
    assert tr.config.style == "luong" and tr.config.score == "additive" and tr.config.attentional_bias
    assert tr.translate("a b").source_tokens == ["a", "b", "<eos>"]


def test_character_models_read_spaces_as_joeynmt_wrote_them(tmp_path):
    folder = write_joey_folder(tmp_path / "c", joey_config(level="char"), src_words=("a", "▁", "b"))
    tr = import_joeynmt_files(folder)
    assert " " in tr.src_vocab and "▁" not in tr.src_vocab
    assert tr.translate("a b").source_tokens == ["a", " ", "b", "<eos>"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: c["model"]["decoder"].update(init_hidden="last"), "model.decoder.init_hidden is 'last'"),
        (lambda c: c["model"]["decoder"].update(activation="relu"), "model.decoder.activation is 'relu'"),
        (lambda c: c["model"]["encoder"].update(bidirectional=False), "model.encoder.bidirectional is False"),
        (lambda c: c["data"]["src"].update(level="bpe"), "data.src.level is 'bpe'"),
        (lambda c: c["model"]["encoder"]["embeddings"].update(embedding_dim=8), "sizes differ"),
        (lambda c: c["model"].pop("decoder"), "model.decoder is missing"),
        (
            lambda c: [c["model"][side].pop("hidden_size") for side in ("encoder", "decoder")],
            "model.decoder.hidden_size is missing",
        ),
        (
            lambda c: [c["model"][side].pop("embeddings") for side in ("encoder", "decoder")],
            "model.encoder.embeddings.embedding_dim is missing",
        ),
    ],
)
def test_what_attnviz_cannot_represent_is_refused_by_name(tmp_path, change, message):
    cfg = joey_config()
    change(cfg)
    folder = tmp_path / "m"
    write_joey_folder(folder, joey_config())
    (folder / "config.yaml").write_text(yaml.safe_dump(cfg))
    with pytest.raises(CheckpointError, match=message):
        import_joeynmt_files(folder)


def test_a_checkpoint_of_another_model_is_refused(tmp_path):
    folder = write_joey_folder(tmp_path / "m", joey_config(attention="luong"))
    other = write_joey_folder(tmp_path / "o", joey_config(attention="bahdanau"))
    with pytest.raises(CheckpointError, match=r"holds decoder\.attention\.energy_layer\.weight, which this config"):
        import_joeynmt_files(folder, ckpt=other / "best.ckpt")
    (tmp_path / "noise.ckpt").write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match=r"noise\.ckpt: not a checkpoint torch\.load can read"):
        import_joeynmt_files(folder, ckpt=tmp_path / "noise.ckpt")


def test_a_zip_of_the_folder_imports_and_other_zips_are_refused(tmp_path):
    folder = write_joey_folder(tmp_path / "my_rnn")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for path in folder.iterdir():
            z.write(path, f"my_rnn/{path.name}")
    assert import_joeynmt_zip(buffer.getvalue(), "my_rnn.zip").config.cell == "gru"
    with pytest.raises(CheckpointError, match="not a zip archive"):
        import_joeynmt_zip(b"nope", "x.zip")
    empty = io.BytesIO()
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("readme.txt", "hi")
    with pytest.raises(CheckpointError, match=r"x\.zip: no config\.yaml inside"):
        import_joeynmt_zip(empty.getvalue(), "x.zip")


def test_cli_import_and_its_one_line_errors(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ATTNVIZ_MODELS", str(tmp_path / "models"))
    folder = write_joey_folder(tmp_path / "m")
    code, out, _ = run(capsys, "import-joeynmt", str(folder), "--out", "mine")
    assert code == 0 and "additive/luong" in out
    assert load(str(tmp_path / "models" / "mine.safetensors")).config.lstm_cell_init == "bridge"
    (tmp_path / "short.txt").write_text("<unk>\n<pad>\n<s>\n</s>\na\n")
    for args, message in [
        ([str(folder), "--out", "mine"], "already exists; add --force to overwrite it, or choose another --out\n"),
        ([str(tmp_path), "--out", "x"], "not a JoeyNMT model folder"),
        ([str(folder), "--src-vocab", str(tmp_path / "short.txt"), "--out", "x"], "has 5 tokens"),
        ([str(folder), "--ckpt", str(tmp_path / "none.ckpt"), "--out", "x"], "none.ckpt: no checkpoint there"),
    ]:
        code, out, err = run(capsys, "import-joeynmt", *args)
        assert code == 2 and not out and len(err.strip().splitlines()) == 1 and message in err, err


def test_the_cell_arithmetic_of_an_imported_model_includes_its_bias(tmp_path):
    tr = import_joeynmt_files(write_joey_folder(tmp_path / "m", joey_config(attention="luong")))
    al = tr.translate("a b c")
    cell = cell_numbers(tr, al, 0, 1)
    assert cell["W_c [c_t; h_t] + b_c"].latex.startswith("W_c [c_t; h_t] + b_c = ")
    assert cell.token_probability == pytest.approx(float(np.exp(al.token_log_probs[0])), rel=1e-4)
