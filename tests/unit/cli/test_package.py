"""The installable package: the console script, one CLI module per command in one table, and a
``list`` that finds the shipped models from any working directory."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys
import tomllib
from pathlib import Path

import attnviz.cli
from attnviz.cli.main import COMMANDS, build_parser, command
from attnviz.store import absent_hint, absent_models, list_models, models_dir, pretrained_dir, read_manifest
from tests.support.cli import run

ROOT = Path(__file__).resolve().parents[3]
HELPERS = {"main", "options", "adapting", "stopping", "streams", "progress"}  # cli modules that are not commands
MODULE_OF = {"list": "list_models"}  # a command whose name would shadow a builtin


def _attnviz(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """``python -m attnviz ARGS`` in ``cwd``, importing this checkout whether or not it is installed."""
    clean = {k: v for k, v in os.environ.items() if k not in ("ATTNVIZ_PRETRAINED", "ATTNVIZ_MODELS")}
    env = {**clean, "PYTHONPATH": str(ROOT), "COLUMNS": "200", **env}
    command = [sys.executable, "-m", "attnviz", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_console_script_is_declared_and_points_at_main():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    target = project["project"]["scripts"]["attnviz"]
    module, _, name = target.partition(":")
    assert (module, name) == ("attnviz.cli", "main")
    main = getattr(importlib.import_module(module), name)
    assert callable(main)
    assert main is attnviz.cli.main
    assert build_parser().prog == "attnviz"


def test_the_wheel_holds_the_library_the_app_and_the_built_in_tasks_models():
    """What pyproject.toml puts in the wheel: the two packages and exactly the data files it names
    (.ci/wheel_check.py builds the wheel and lists it)."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert setuptools["packages"]["find"]["include"] == ["attnviz", "attnviz.*", "attnviz_app", "attnviz_app.*"]
    assert setuptools["packages"]["find"]["namespaces"] is False and setuptools["include-package-data"] is False
    assert (ROOT / "attnviz" / "shipped-models").resolve() == ROOT / "pretrained"
    assert (ROOT / "attnviz_app" / ".streamlit" / "config.toml").resolve() == ROOT / ".streamlit" / "config.toml"
    data = [ROOT / "attnviz" / p for p in setuptools["package-data"]["attnviz"]]
    files = {f.name for pattern in data for f in pattern.parent.glob(pattern.name)}
    shipped = {m["file"] for m in read_manifest()}
    built_in = {f for f in shipped if f.startswith(("dates-", "toy-fr-"))}
    assert built_in and built_in | {"manifest.json"} <= files
    assert not [f for f in files if f.startswith("multi30k")]
    assert {f"{Path(f).stem}.json" for f in built_in} <= files  # their recipes
    # the Evaluate page's "Does attention explain?" table, read from the package outside a checkout
    assert setuptools["package-data"]["attnviz.evaluation"] == ["attribution_aer.json"]
    packaged = ROOT / "attnviz" / "evaluation" / "attribution_aer.json"
    assert packaged.resolve() == ROOT / "benchmarks" / "results" / "attribution_aer.json"


def test_an_installed_package_reads_the_models_it_holds(monkeypatch):
    monkeypatch.delenv("ATTNVIZ_PRETRAINED", raising=False)
    monkeypatch.setattr("attnviz.store.paths.checkout_dir", lambda: None)
    assert pretrained_dir() == ROOT / "attnviz" / "shipped-models"


def test_shipped_models_missing_from_the_folder_are_left_out_and_the_way_to_get_them_said(
    capsys, tmp_path, monkeypatch
):
    manifest = json.loads((ROOT / "pretrained" / "manifest.json").read_text())["models"]
    entries = [m for m in manifest if m["name"] in ("toy-fr-dot-luong", "multi30k-en-fr-dot-luong")]
    (tmp_path / "manifest.json").write_text(json.dumps({"models": entries}), encoding="utf-8")
    (tmp_path / "toy-fr-dot-luong.safetensors").write_bytes(
        (ROOT / "pretrained" / "toy-fr-dot-luong.safetensors").read_bytes()
    )
    monkeypatch.setenv("ATTNVIZ_PRETRAINED", str(tmp_path))
    monkeypatch.setenv("ATTNVIZ_MODELS", str(tmp_path / "mine"))
    assert [m.name for m in list_models()] == ["toy-fr-dot-luong"]
    assert [m["name"] for m in absent_models()] == ["multi30k-en-fr-dot-luong"]
    hint = absent_hint(absent_models())
    assert hint.startswith("1 shipped model (multi30k-en-fr;") and "MB) is not installed here. To use it," in hint
    assert "attnviz app --models DIR" in hint
    assert absent_hint([]) == ""
    code, out, err = run(capsys, "list")
    assert code == 0 and "toy-fr-dot-luong" in out and "multi30k" not in out
    assert err == f"attnviz list: note: {hint}\n"
    code, _, err = run(capsys, "translate", "--model", "multi30k-en-fr-dot-luong", "a man")
    assert code == 2 and "'multi30k-en-fr-dot-luong' is a shipped model that is not installed here" in err
    assert "ATTNVIZ_PRETRAINED=DIR" in err and "no model named" not in err


def test_every_cli_module_is_a_registered_command():
    modules = {m.name for m in pkgutil.iter_modules(attnviz.cli.__path__)} - HELPERS
    assert modules == set(COMMANDS.values()), "register each command module in COMMANDS (attnviz/cli/main.py)"
    for name in COMMANDS:
        module = command(name)
        assert module.__name__ == f"attnviz.cli.{MODULE_OF.get(name, name.replace('-', '_'))}"
        assert isinstance(module.HELP, str) and module.HELP and "\n" not in module.HELP
        assert callable(module.add_arguments) and callable(module.run)


def test_help_lists_every_command(tmp_path):
    done = _attnviz("--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: attnviz")
    for name in COMMANDS:
        assert f"    {name} " in done.stdout
        assert command(name).HELP in done.stdout


def test_list_finds_the_shipped_models_from_any_folder(tmp_path):
    done = _attnviz("list", "--json", cwd=tmp_path, ATTNVIZ_MODELS=str(tmp_path / "models"))
    assert done.returncode == 0, done.stderr
    listed = {m["name"] for m in json.loads(done.stdout)["models"] if m["source"] == "pretrained"}
    shipped = {m["name"] for m in json.loads((ROOT / "pretrained" / "manifest.json").read_text())["models"]}
    assert shipped and listed == shipped


def test_folders_follow_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("ATTNVIZ_PRETRAINED", raising=False)
    monkeypatch.delenv("ATTNVIZ_MODELS", raising=False)
    assert pretrained_dir() == ROOT / "pretrained"
    assert models_dir() == ROOT / "models"
    monkeypatch.setenv("ATTNVIZ_PRETRAINED", str(tmp_path / "shipped"))
    monkeypatch.setenv("ATTNVIZ_MODELS", str(tmp_path / "mine"))
    assert pretrained_dir() == (tmp_path / "shipped").resolve()
    assert models_dir() == (tmp_path / "mine").resolve()
    assert read_manifest() == []  # nothing shipped in the empty folder


def test_a_reader_that_stops_early_is_no_error(tmp_path):
    """``attnviz list | head``: the reader may close the pipe before the command writes; the
    command stops quietly, with no error and no traceback (``true`` reads nothing at all)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    script = f"'{sys.executable}' -m attnviz list | true; echo ${{PIPESTATUS[0]}}"  # the command's own exit code
    done = subprocess.run(
        script, shell=True, executable="/bin/bash", cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip() == "0" and done.stderr == "", done.stderr
