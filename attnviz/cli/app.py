"""``attnviz app``: start the Streamlit app of the installed package (``streamlit run`` on its
entry file, ``attnviz_app/app.py``, whose server settings lie beside it in ``.streamlit/``).

The package holds the built-in tasks' models; ``--models DIR`` (or ``ATTNVIZ_PRETRAINED``) names
a folder of shipped models with its manifest, such as the repository's ``pretrained/``, which has
the Multi30k ones too. The library imports no Streamlit: this command only starts it.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

from attnviz.cli.options import int_in
from attnviz.data import MULTI30K_ENV
from attnviz.errors import ConfigError, resolved

HELP = "start the Streamlit app (all its pages) in a local web server"
APP_PACKAGE = "attnviz_app"
_PATH_PART = re.compile(r"[A-Za-z0-9._~-]+")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``attnviz app``."""
    p.add_argument(
        "--models",
        metavar="DIR",
        type=Path,
        help="the shipped models' folder, with its manifest.json: a copy of the repository's pretrained/ has the "
        "Multi30k models, which the package leaves out (default: $ATTNVIZ_PRETRAINED, else the package's "
        "built-in tasks' models)",
    )
    p.add_argument("--port", type=int_in(1, 65535), default=8501, help="port to serve on (default: 8501)")
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default: 127.0.0.1, this machine only; 0.0.0.0 serves the network)",
    )
    p.add_argument(
        "--multi30k",
        metavar="DIR",
        type=Path,
        help="the Multi30k folder (train.en.gz, val.de.gz, test_2016_flickr.fr.gz, ...) that Compare, Evaluate and "
        "the Train and Data pages read (default: $ATTNVIZ_MULTI30K, else ../shared/data/multi30k beside a checkout)",
    )
    p.add_argument(
        "--base-url-path",
        metavar="PATH",
        default=None,
        help="serve the app under http://HOST:PORT/PATH/, as behind a proxy that forwards that path (default: "
        "$STREAMLIT_SERVER_BASE_URL_PATH, else the root)",
    )
    p.add_argument("--browser", action="store_true", help="open a browser tab on the app once it serves")


def entry_file() -> Path:
    """The app's entry file in the installed ``attnviz_app`` package (found without importing it)."""
    spec = importlib.util.find_spec(APP_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            f"the {APP_PACKAGE} package is not installed; install attnviz with its app: pip install 'attnviz[app]'"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "app.py"


def streamlit_command(args: argparse.Namespace) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that serve the app as ``args`` ask."""
    if importlib.util.find_spec("streamlit") is None:
        raise ConfigError("the app needs Streamlit: pip install 'attnviz[app]' (or pip install -r requirements.txt)")
    env = dict(os.environ)
    if args.models is not None:
        folder = resolved(args.models, "--models")
        if not (folder / "manifest.json").is_file():
            raise ConfigError(
                f"{folder} has no manifest.json: --models names a shipped models' folder, such as a "
                "copy of the repository's pretrained/"
            )
        env["ATTNVIZ_PRETRAINED"] = str(folder)
    if args.multi30k is not None:
        folder = resolved(args.multi30k, "--multi30k")
        if not folder.is_dir():
            raise ConfigError(f"--multi30k {folder} is not a folder: name the folder that holds train.en.gz, ...")
        env[MULTI30K_ENV] = str(folder)
    headless = "false" if args.browser else "true"
    command = [sys.executable, "-m", "streamlit", "run", str(entry_file()), "--server.port", str(args.port)]
    command += ["--server.address", args.host, "--server.headless", headless]
    if args.base_url_path is not None:
        command += ["--server.baseUrlPath", base_path(args.base_url_path)]
    return command, env


def _parts(path: str) -> list[str]:
    """A URL path's parts, without the empty ones that slashes at its ends or doubled make."""
    return [part for part in path.strip().split("/") if part]


def base_path(path: str) -> str:
    """A base URL path as Streamlit takes it (no slashes at the ends); one that is not a plain path of
    letters, digits, ``-``, ``_``, ``.`` and ``~`` between slashes is refused."""
    parts = _parts(path)
    if not all(_PATH_PART.fullmatch(part) and part not in (".", "..") for part in parts):
        raise ConfigError(
            f"--base-url-path {path[:60]!r} is not a plain URL path: use letters, digits, -, _, . and ~ between "
            "slashes (e.g. attnviz or tools/attnviz)"
        )
    return "/".join(parts)


def served_at(args: argparse.Namespace, env: dict[str, str]) -> str:
    """The address the app answers at: the host, the port and the base path, as given or from Streamlit's
    environment variable."""
    path = args.base_url_path if args.base_url_path is not None else env.get("STREAMLIT_SERVER_BASE_URL_PATH", "")
    return f"http://{args.host}:{args.port}/" + "".join(f"{part}/" for part in _parts(path))


def run(args: argparse.Namespace) -> int:
    command, env = streamlit_command(args)
    print(f"attnviz app: serving on {served_at(args, env)} (Ctrl+C stops it)", file=sys.stderr)
    if os.name == "posix":  # the server takes this process over: a signal to it reaches Streamlit itself
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, command, env)
    return subprocess.call(command, env=env)
