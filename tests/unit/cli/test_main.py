"""Every CLI command, its JSON output, and its bad-input paths (exit 2, one line, no traceback):
``train`` names are slugs and bad outputs are refused before training, guidance from flags, out of
memory and other errors."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from itertools import pairwise
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from attnviz import training
from attnviz.cli.main import main
from attnviz.cli.main import main as cli_main
from attnviz.data.vocab import UNK_ID
from attnviz.store import pretrained_dir
from attnviz.store.checkpoint import load_checkpoint, read_header, save
from tests.support.cli import run
from tests.support.paths import ROOT


@pytest.fixture(scope="module")
def model_path(trained, tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "rev.safetensors"
    meta = trained.meta  # the session's shared model: saved with a task and example, left as it was
    trained.meta = {**meta, "task": "reverse", "example": "a b c"}
    try:
        return save(trained, path)
    finally:
        trained.meta = meta


@pytest.fixture(autouse=True)
def inside_model_folders(model_path, tmp_path, monkeypatch):
    """The CLI reads checkpoints only from the model folders and the working directory."""
    monkeypatch.setenv("ATTNVIZ_MODELS", str(model_path.parent))
    monkeypatch.chdir(tmp_path)


def test_list_json(capsys, model_path, monkeypatch):
    monkeypatch.setenv("ATTNVIZ_MODELS", str(model_path.parent))
    code, out, _ = run(capsys, "list", "--json")
    data = json.loads(out)
    assert code == 0 and "additive" in data["scores"] and "dates" in data["tasks"]
    model = next(m for m in data["models"] if m["name"] == "rev")
    assert {"name", "task", "score", "style", "example", "metrics"} <= set(model)
    assert model["task"] == "reverse" and model["score"] == "additive"


def test_translate_json_carries_the_trace(capsys, model_path):
    code, out, _ = run(capsys, "translate", "--model", str(model_path), "--json", "a b c d")
    data = json.loads(out)
    assert code == 0 and data["translation"] == "d c b a"
    assert data["source_tokens"] == ["a", "b", "c", "d", "<eos>"]
    assert len(data["weights"]) == len(data["target_tokens"]) == len(data["scores"])
    assert data["pharaoh"].startswith("3-0 2-1 1-2 0-3")
    assert data["unk_copies"] == {} and len(data["coverage"]) == 5
    code, out, _ = run(capsys, "translate", "--model", str(model_path), "--beam", "3", "--json", "a b c")
    assert code == 0 and 1 < len(json.loads(out)["hypotheses"]) <= 3


def test_unk_is_replaced_unless_kept(capsys, model_path, tmp_path):
    unk_model = load_checkpoint(model_path)
    with torch.no_grad():
        unk_model.model.decoder.out.bias[UNK_ID] = 1e4  # says <unk> at every step
    path = save(unk_model, model_path.parent / "unk.safetensors")
    code, out, _ = run(capsys, "translate", "--model", str(path), "--max-len", "3", "--json", "a Zebra b")
    data = json.loads(out)
    assert code == 0 and data["target_tokens"] == ["<unk>"] * 3
    assert "<unk>" not in data["translation"] and set(data["translation"].split()) <= {"a", "Zebra", "b"}
    assert set(data["unk_copies"]) == {"0", "1", "2"}
    code, out, _ = run(capsys, "translate", "--model", str(path), "--max-len", "3", "--keep-unk", "a Zebra b")
    assert code == 0 and out.splitlines()[0] == "<unk> <unk> <unk>"
    code, out, _ = run(
        capsys, "evaluate", "--model", str(path), "--data", "reverse", "--n", "3", "--keep-unk", "--json"
    )
    assert code == 0 and json.loads(out)["replace_unk"] is False


def test_translate_plain_and_align(capsys, model_path):
    code, out, _ = run(capsys, "translate", "--model", str(model_path), "a b c")
    assert code == 0 and out.splitlines()[0] == "c b a"
    code, out, _ = run(capsys, "align", "--model", str(model_path), "--json", "a b c", "c b a")
    assert code == 0 and json.loads(out)["target_tokens"] == ["c", "b", "a", "<eos>"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["translate", "--model", "MODEL", ""], "empty"),
        (["translate", "--model", "MODEL", "x " * 5000], "characters"),
        (["translate", "--model", "no-such-model.safetensors", "a"], "no model named"),
        (["translate", "--model", "BADFILE", "a"], "pickle"),
        (["translate", "--model", "../../../../../etc/passwd", "a"], "outside the model folders"),
        (["translate", "--model", "/etc/hostname", "a"], "outside the model folders"),
        (["align", "--model", "MODEL", "a", "   "], "empty"),
        (["data", "--task", "nonsense"], "unknown data spec"),
        (["data", "missing.csv?src=a&tgt=b"], "missing.csv"),
        (["evaluate", "--model", "MODEL", "--data", "nonsense"], "unknown data spec"),
        (["train", "--epochs", "2"], "--data"),
        (["translate", "--model", "https://example.org/m.safetensors", "a"], "is a URL; attnviz reads a model's"),
        (["evaluate", "--model", "MODEL", "--data", "https://example.org/d.csv?src=a&tgt=b"], "download it first"),
        (["hf", "http://example.org/model", "a"], "is a URL; attnviz reads a Hugging Face model folder"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, model_path, tmp_path, argv, message):
    bad = tmp_path / "evil.pt"
    bad.write_bytes(b"\x80\x04K\x01.")
    argv = [str(model_path) if a == "MODEL" else str(bad) if a == "BADFILE" else a for a in argv]
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["data", "new\nline.csv?src=a&tgt=b"],  # a DataError
        ["align-eval", "--model", "m", "--src", "new\nline.txt", "--tgt", "t", "--gold", "g"],  # an OSError
        ["translate", "--model", "new\nline\x1b[2J.safetensors", "a"],
    ],
)
def test_file_names_with_control_characters_stay_on_one_line(capsys, tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, *argv)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "new\\nline" in err and "\x1b" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["translate", "--model", "m", "--beam", "0", "x"],
        ["translate", "--model", "m", "--beam", "many", "x"],
        ["train", "--data", "dates", "--epochs", "-1"],
        ["train", "--data", "dates", "--dropout", "2"],
        ["train", "--data", "dates", "--score", "bilinear"],
        ["evaluate", "--model", "m", "--n", "0"],
    ],
)
def test_out_of_range_flags_exit_2(capsys, argv):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert "error" in capsys.readouterr().err


def test_train_then_evaluate(capsys, tmp_path):
    out_path = tmp_path / "copy.safetensors"
    flags = shlex.split("--data copy --n-train 300 --emb 16 --hidden 24 --attn 16 --epochs 2 --batch 32")
    code, out, err = run(capsys, "train", *flags, "--out", str(out_path), "--json")
    assert code == 0 and out_path.is_file()
    assert re.search(r"epoch 2: loss [\d.]+, acc [\d.]+, valid loss [\d.]+, acc [\d.]+, lr [\d.]+e-0\d", err)
    summary = json.loads(out)
    assert set(summary["metrics"]) >= {"bleu", "exact_match", "aer", "entropy"}
    code, out, _ = run(capsys, "evaluate", "--model", str(out_path), "--n", "20", "--json")
    metrics = json.loads(out)
    assert code == 0 and metrics["n"] == 20
    assert 0 <= metrics["bleu"] <= 100 and 0 <= metrics["exact_match"] <= 1 and 0 <= metrics["aer"] <= 1


def test_train_from_recipe_file(capsys, tmp_path):
    recipe = {
        "name": "tiny-sort",
        "data": "sort",
        "data_options": {"n_train": 200, "n_valid": 20, "n_test": 20},
        "model": {"score": "dot", "style": "luong", "emb_dim": 16, "hidden_dim": 24, "attn_dim": 16},
        "train": {"epochs": 1, "batch_size": 32},
    }
    path = tmp_path / "r.json"
    path.write_text(json.dumps(recipe))
    out_path = tmp_path / "tiny-sort.safetensors"
    code, _, _ = run(capsys, "train", "--recipe", str(path), "--out", str(out_path), "--quiet")
    assert code == 0
    from attnviz.store.checkpoint import read_header

    header = read_header(out_path)
    assert header["config"]["score"] == "dot" and header["meta"]["recipe_full"]["data"] == "sort"
    path.write_text(json.dumps({**recipe, "model": {"colour": "red"}}))
    code, _, err = run(capsys, "train", "--recipe", str(path), "--quiet")
    assert code == 2 and "unknown model settings" in err


def test_train_keeps_full_precision_unless_asked(capsys, tmp_path):
    from attnviz.store import stored_as

    recipe = {
        "name": "tiny-sort",
        "data": "sort",
        "data_options": {"n_train": 100, "n_valid": 10, "n_test": 10},
        "model": {"score": "dot", "style": "luong", "emb_dim": 16, "hidden_dim": 24, "attn_dim": 16},
        "train": {"epochs": 1, "batch_size": 32},
        "store": "int8",  # what a shipped recipe says
    }
    path = tmp_path / "r.json"
    path.write_text(json.dumps(recipe))
    full, small = tmp_path / "full.safetensors", tmp_path / "small.safetensors"
    assert run(capsys, "train", "--recipe", str(path), "--out", str(full), "--quiet")[0] == 0
    assert run(capsys, "train", "--recipe", str(path), "--out", str(small), "--store", "int8", "--quiet")[0] == 0
    assert stored_as(full) == "fp32" and stored_as(small) == "int8"
    with pytest.raises(SystemExit):  # argparse: exit 2 with the choices
        run(capsys, "train", "--recipe", str(path), "--store", "int4", "--quiet")
    assert "int8" in capsys.readouterr().err


def test_module_entry_point_exits_2_without_traceback(tmp_path):
    command = [sys.executable, "-m", "attnviz", "translate", "--model", str(tmp_path / "nope.safetensors"), "hi"]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stderr.startswith("attnviz translate: error:") and "Traceback" not in proc.stderr


@pytest.fixture
def no_training(monkeypatch):
    """Record where the CLI would train to, without training."""
    calls = []

    def fake(recipe, out=None, *args, **kwargs):
        calls.append((recipe, Path(out)))
        return SimpleNamespace(meta={"metrics": {}, "train_seconds": 0.0})

    monkeypatch.setattr(training, "run_recipe", fake)  # the name the CLI calls
    return calls


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
        (["--out", str(models / "loop.safetensors")], "is a symlink loop or an unreadable link"),
    ]
    (models / "loop.safetensors").symlink_to(models / "loop.safetensors")
    for flags, message in cases:
        code, _, err = run(capsys, "train", "--data", "reverse", "--quiet", *flags)
        assert code == 2 and message in err and err.count("\n") == 1, (flags, err)
    assert not no_training and shipped.stat().st_mtime_ns == before
    code, _, err = run(capsys, "train", "--data", "reverse", "--quiet", "--name", "taken", "--force")
    assert code == 0 and no_training[-1][1] == models / "taken.safetensors"


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


def test_train_refuses_an_unwritable_folder_before_training(capsys, models, no_training, monkeypatch):
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: mode != os.W_OK)  # a read-only folder
    code, _, err = run(capsys, "train", "--data", "reverse", "--quiet", "--name", "ro")
    assert code == 2 and err.count("\n") == 1 and f"{models} is not writable" in err and not no_training


def test_a_failed_checkpoint_write_is_one_line_and_exit_2(capsys, models, monkeypatch):
    from safetensors import SafetensorError

    from attnviz.training import recipes

    def full(*args, **kwargs):
        raise SafetensorError("Error while serializing: IoError(Os { code: 28, kind: StorageFull })")

    monkeypatch.setattr(recipes, "save", full)
    argv = ["train", "--data", "reverse", "--quiet", "--max-steps", "1", "--n-train", "20", "--name", "full"]
    code, _, err = run(capsys, *argv)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"could not write {models / 'full.safetensors'} (" in err and "StorageFull" in err


def test_other_runtime_errors_still_show_the_bug(monkeypatch):
    from attnviz.cli import bench

    monkeypatch.setattr(bench, "run_bench", lambda **kw: (_ for _ in ()).throw(RuntimeError("a bug")))
    with pytest.raises(RuntimeError, match="a bug"):
        main(["bench"])


def test_device_meta_is_refused(capsys, models):
    code, _, err = run(capsys, "train", "--data", "reverse", "--device", "meta", "--quiet", "--n-train", "20")
    assert code == 2 and err.count("\n") == 1 and "meta" in err


def test_the_cli_trains_with_guidance_from_flags(tmp_path, capsys):
    out = tmp_path / "cli.safetensors"
    tiny = shlex.split("--data reverse --n-train 48 --emb 8 --hidden 16 --attn 8 --epochs 1")
    guidance = shlex.split("--guided-weight 0.7 --guided-links gold")
    args = ["train", *tiny, "--out", str(out), "--quiet", *guidance]
    assert cli_main(args) == 0
    meta = read_header(out)["meta"]
    assert meta["guided"]["weight"] == 0.7 and meta["recipe"]["guided_weight"] == 0.7
    capsys.readouterr()
    missing = ["--guided-links", str(tmp_path / "none.txt"), "--out", str(tmp_path / "x.safetensors")]
    assert cli_main(["train", "--data", "reverse", "--max-steps", "1", *missing]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no links file at" in err


def test_a_training_holding_the_output_makes_a_second_one_refuse(capsys, models, no_training):
    """The CLI and the app reserve an output with one lock (``.training/NAME.lock``): while one
    training holds it, `attnviz train` to the same file is a one-line error, and the app's
    reservation moves to NAME-2; once released, the name is free again."""
    from attnviz.store import STAGING, hold_lock, release_lock

    lock = models / STAGING / "clash.lock"
    fd = hold_lock(lock)  # what a running training (the app's or another CLI's) holds
    try:
        code, _, err = run(capsys, "train", "--data", "reverse", "--quiet", "--name", "clash")
        assert code == 2 and "another training is writing" in err and err.count("\n") == 1, err
        code, _, err = run(capsys, "train", "--data", "reverse", "--quiet", "--out", str(models / "clash.safetensors"))
        assert code == 2 and "another training is writing" in err, err
        assert not no_training
    finally:
        release_lock(lock, fd)
    code, _, err = run(capsys, "train", "--data", "reverse", "--quiet", "--name", "clash")
    assert code == 0 and no_training[-1][1] == models / "clash.safetensors", err
    assert not lock.exists() and not (models / STAGING).exists()  # released, the folder tidied


def test_the_app_does_not_take_a_name_a_cli_training_holds(models):
    from attnviz.store import STAGING, hold_lock, release_lock, reserve_name

    lock = models / STAGING / "shared.lock"
    fd = hold_lock(lock)
    try:
        path, app_fd = reserve_name(models, "shared")
        assert path == models / "shared-2.safetensors"
        release_lock(models / STAGING / "shared-2.lock", app_fd)
    finally:
        release_lock(lock, fd)


def test_every_command_is_in_the_docs_table_and_its_section_names_every_option():
    from attnviz.cli.main import COMMANDS, build_parser

    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    starts = [*sorted((m.start(), m.group(1)) for m in re.finditer(r"^## (\S+)$", text, re.M)), (len(text), "")]
    sections = {name: text[a:b] for (a, name), (b, _) in pairwise(starts)}
    commands = next(a for a in build_parser([])._actions if a.dest == "command").choices
    assert list(commands) == list(COMMANDS)
    for name, parser in commands.items():
        assert f"| [`{name}`](#{name}) |" in text and name in sections, name
        options = [o for action in parser._actions for o in action.option_strings if o.startswith("--")]
        assert [o for o in options if o != "--help" and o not in sections[name]] == [], name


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (OSError(28, "No space left on device"), "error: No space left on device\n"),  # no file: no dangling ': '
        (OSError(13, "Permission denied", "/x/y"), "error: Permission denied: /x/y\n"),
        (RuntimeError("Symlink loop from '/a/b'"), "error: Symlink loop from '/a/b'; remove the loop\n"),
    ],
)
def test_file_system_errors_are_one_line_and_exit_2(capsys, monkeypatch, error, said):
    from attnviz.cli import bench

    def boom(**kwargs):
        raise error

    monkeypatch.setattr(bench, "run_bench", boom)
    code, _, err = run(capsys, "bench")
    assert code == 2 and err.endswith(said) and err.count("\n") == 1
