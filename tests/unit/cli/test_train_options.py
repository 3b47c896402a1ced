"""``attnviz train``'s model and training flags land in the saved model: ``--layers`` sets the encoder's
and the decoder's layers, ``--encoder`` the encoder, ``--lr`` the rate the recipe records, and
``--max-vocab`` caps each side's vocabulary (the specials counted); values out of range are usage errors."""

from __future__ import annotations

import pytest

from attnviz.store.checkpoint import load_checkpoint
from tests.support.cli import run

TINY = ["train", "--data", "reverse", "--n-train", "64", "--emb", "8", "--hidden", "8", "--attn", "8"]
QUIET = ["--max-steps", "1", "--eval-n", "0", "--quiet"]


def test_layers_encoder_lr_and_max_vocab_are_what_the_saved_model_holds(capsys, models):
    code, out, err = run(
        capsys, *TINY, *QUIET, "--name", "flags", "--layers", "2", "--encoder", "lstm", "--lr", "0.005",
        "--max-vocab", "8",
    )  # fmt: skip
    assert code == 0, err
    assert out.strip() == f"saved {models / 'flags.safetensors'} (not evaluated)"
    model = load_checkpoint(models / "flags.safetensors")
    cfg = model.model.cfg
    assert cfg.enc_layers == cfg.dec_layers == 2 and cfg.encoder == "lstm"
    assert model.meta["recipe"]["lr"] == 0.005
    assert len(model.src_vocab) == len(model.tgt_vocab) == 8
    assert model.src_vocab.itos[:4] == ["<pad>", "<unk>", "<bos>", "<eos>"]


def test_without_max_vocab_every_symbol_of_the_task_is_kept(capsys, models):
    code, _, err = run(capsys, *TINY, *QUIET, "--name", "plain")
    assert code == 0, err
    model = load_checkpoint(models / "plain.safetensors")
    cfg = model.model.cfg
    assert cfg.enc_layers == cfg.dec_layers == 1 and cfg.encoder == "gru"
    assert len(model.src_vocab) > 8


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--max-vocab", "4", "4 is out of range [5, 1000000]"),
        ("--layers", "9", "9 is out of range [1, 8]"),
        ("--lr", "2", "2.0 is out of range [1e-06, 1.0]"),
        ("--lr", "fast", "'fast' is not a number"),
        ("--encoder", "cnn", "invalid choice: 'cnn'"),
    ],
)
def test_a_flag_out_of_range_is_a_usage_error_and_nothing_is_trained(capsys, models, flag, value, message):
    with pytest.raises(SystemExit) as exc:
        run(capsys, *TINY, *QUIET, flag, value)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and message in err and flag in err and "Traceback" not in err
    assert not list(models.iterdir())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "bad.json: not a JSON recipe"),
        ("[]", "bad.json: a recipe must be a JSON object"),
        ('{"name": "x", "data": "copy", "epoch": 3}', "unknown recipe fields ['epoch']; a recipe has name, data"),
        ('{"name": "x", "data": "copy", "model": "big"}', "recipe field model must be an object"),
    ],
)
def test_a_bad_recipe_file_is_one_line_exit_2_and_nothing_is_trained(capsys, models, text, message):
    (models.parent / "bad.json").write_text(text, encoding="utf-8")
    code, out, err = run(capsys, "train", "--recipe", "bad.json", *QUIET)
    assert code == 2 and not out and len(err.strip().splitlines()) == 1, err
    assert message in err and "Traceback" not in err
    assert not list(models.iterdir())
