"""``attnviz app``: the Streamlit command it runs, the folder of shipped models it names, its help.
The server itself is started from an installed wheel by .ci/wheel_check.py."""

from __future__ import annotations

import json
import tomllib

import pytest

from attnviz.cli import app
from attnviz.cli.main import build_parser
from tests.support.cli import run


def parsed(*argv: str):
    return build_parser().parse_args(["app", *argv])


def test_help_documents_the_models_folder_port_and_host(capsys):
    with pytest.raises(SystemExit) as done:
        build_parser().parse_args(["app", "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for flag in ("--models DIR", "--port PORT", "--host HOST"):
        assert flag in text
    assert "default: 127.0.0.1" in text and "Multi30k" in text


def test_the_command_runs_the_packaged_entry_file_on_loopback_by_default(monkeypatch):
    monkeypatch.delenv("ATTNVIZ_PRETRAINED", raising=False)
    command, env = app.streamlit_command(parsed("--port", "8612"))
    entry = app.entry_file()
    assert command[1:5] == ["-m", "streamlit", "run", str(entry)]
    flags = dict(zip(command[5::2], command[6::2], strict=True))
    assert flags == {"--server.port": "8612", "--server.address": "127.0.0.1", "--server.headless": "true"}
    assert "ATTNVIZ_PRETRAINED" not in env
    settings = tomllib.loads((entry.parent / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert settings["client"]["showErrorDetails"] == "none"  # Streamlit reads the settings beside its entry file


def test_models_names_a_folder_of_shipped_models(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps({"models": []}), encoding="utf-8")
    _, env = app.streamlit_command(parsed("--models", str(tmp_path), "--host", "0.0.0.0"))
    assert env["ATTNVIZ_PRETRAINED"] == str(tmp_path.resolve())


def test_a_models_folder_without_a_manifest_is_one_line_and_exit_2(capsys, tmp_path):
    code, out, err = run(capsys, "app", "--models", str(tmp_path))
    assert code == 2 and out == ""
    assert err.startswith("attnviz app: error: ") and "has no manifest.json" in err and err.count("\n") == 1


@pytest.mark.parametrize("port", ["0", "70000", "http"])
def test_a_bad_port_is_a_usage_error(capsys, port):
    with pytest.raises(SystemExit) as done:
        build_parser().parse_args(["app", "--port", port])
    assert done.value.code == 2


def test_multi30k_names_the_folder_every_page_reads(tmp_path, monkeypatch):
    from attnviz.data import MULTI30K_ENV, default_multi30k

    _, env = app.streamlit_command(parsed("--multi30k", str(tmp_path)))
    assert env[MULTI30K_ENV] == str(tmp_path.resolve())
    monkeypatch.setenv(MULTI30K_ENV, env[MULTI30K_ENV])
    assert default_multi30k() == tmp_path.resolve()  # what the server's pages read


def test_a_multi30k_folder_that_is_not_there_is_one_line_and_exit_2(capsys, tmp_path):
    code, out, err = run(capsys, "app", "--multi30k", str(tmp_path / "absent"))
    assert code == 2 and out == ""
    assert err.startswith("attnviz app: error: ") and "is not a folder" in err and err.count("\n") == 1


@pytest.mark.parametrize(("given", "path"), [("attnviz", "attnviz"), ("/user/alice/attnviz/", "user/alice/attnviz")])
def test_base_url_path_serves_under_a_path_and_says_where(given, path, monkeypatch):
    monkeypatch.delenv("STREAMLIT_SERVER_BASE_URL_PATH", raising=False)
    args = parsed("--port", "8613", "--base-url-path", given)
    command, env = app.streamlit_command(args)
    assert command[command.index("--server.baseUrlPath") + 1] == path
    assert app.served_at(args, env) == f"http://127.0.0.1:8613/{path}/"


def test_the_address_said_follows_streamlits_own_variable(monkeypatch):
    monkeypatch.setenv("STREAMLIT_SERVER_BASE_URL_PATH", "tools/attnviz")
    args = parsed("--port", "8614")
    command, env = app.streamlit_command(args)
    assert "--server.baseUrlPath" not in command  # Streamlit reads the variable itself
    assert app.served_at(args, env) == "http://127.0.0.1:8614/tools/attnviz/"
    monkeypatch.delenv("STREAMLIT_SERVER_BASE_URL_PATH")
    assert app.served_at(args, dict(env, STREAMLIT_SERVER_BASE_URL_PATH="")) == "http://127.0.0.1:8614/"


@pytest.mark.parametrize("given", ["../etc", "a b", "x?y=1", "http://evil.example/"])
def test_a_base_url_path_that_is_not_a_plain_path_is_one_line_and_exit_2(capsys, given):
    code, out, err = run(capsys, "app", "--base-url-path", given)
    assert code == 2 and out == ""
    assert "is not a plain URL path" in err and err.count("\n") == 1
