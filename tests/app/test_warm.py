"""The server's start-up: an entry file as a module is the server (st.App), as a script the pages;
the housekeeping and warm-up run when app.py calls them (boot.start, boot.warm_up), never on import."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from streamlit.testing.v1 import AppTest

from attnviz.server import front_page
from attnviz.store import catalog, front_entry
from tests.support.paths import ROOT

ENTRIES = ["app.py", "attnviz_app/app.py"]  # a checkout's entry and the installed package's


def test_the_warm_up_loads_the_model_the_app_opens_on(app_env):
    entry = front_page()
    assert entry == front_entry(catalog.list_models())
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    assert at.selectbox(key="explore_task").value == "toy-fr"
    assert entry.name == "toyfr-general-luong"  # toy-fr's score in both styles, Luong's model


@pytest.mark.parametrize("entry", ENTRIES)
def test_imported_as_a_module_an_entry_is_the_server_and_draws_nothing(entry):
    code = f"import runpy; ns = runpy.run_path({entry!r}, run_name='app'); print(type(ns['app']).__name__)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "App"
    assert "ScriptRunContext" not in done.stderr  # no page element was drawn outside a session
    assert "torch" not in done.stderr  # the library loads when the server starts, not before


@pytest.mark.parametrize("entry", ENTRIES)
def test_the_app_routes_its_pages_with_public_api_only(entry):
    """Streamlit routes a pages/ folder beside the entry file on its own until a session first calls
    st.navigation (a fresh server's first visit to /evaluate ran that page without the frame); no
    such folder, and no switch of Streamlit's internals instead."""
    assert not (ROOT / entry).parent.joinpath("pages").exists()
    sources = [ROOT / "app.py", *sorted((ROOT / "attnviz_app").rglob("*.py"))]
    assert not [p for p in sources if "PagesManager" in p.read_text(encoding="utf-8")]


def test_a_session_during_the_warm_up_import_waits_for_the_library(monkeypatch):
    """A session that starts while the server's warm-up thread is still importing boot.py finds a
    half-imported module in sys.modules: not ready yet (it then waits on the import), never an error."""
    from types import ModuleType

    from attnviz_app import loading

    monkeypatch.setitem(sys.modules, loading.BOOT, ModuleType(loading.BOOT))  # no `started` yet
    assert loading.library_ready() is False
    ready = ModuleType(loading.BOOT)
    ready.started = lambda: True
    monkeypatch.setitem(sys.modules, loading.BOOT, ready)
    assert loading.library_ready() is True


def _fresh_process(code: str, tmp_path) -> subprocess.CompletedProcess:
    """``code`` in a new Python with its temporary and models folders under ``tmp_path``."""
    env = {**os.environ, "TMPDIR": str(tmp_path), "ATTNVIZ_MODELS": str(tmp_path / "models")}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_importing_boot_tidies_nothing_and_start_tidies_once(tmp_path):
    done = _fresh_process(
        "import os\n"
        "from attnviz_app.app_pages.shared import boot\n"
        "from attnviz.store import upload_root\n"
        "mine = upload_root() / f'server-{os.getpid()}'\n"
        "print(mine.exists(), boot.started())\n"
        "boot.start(); boot.start()\n"
        "print(mine.is_dir(), boot.started())\n",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False", "True", "True"]


def test_an_upload_folder_in_the_way_is_one_warning_line_and_the_server_starts(tmp_path):
    # another user's folder, or a file, where this user's uploads go: the pages work, uploads say why not
    done = _fresh_process(
        "import logging; from attnviz.store import upload_root\n"
        "upload_root().write_text('in the way')\n"
        "logging.basicConfig(level=logging.WARNING, format='%(levelname)s %(message)s')\n"
        "from attnviz_app.app_pages.shared import boot\n"
        "boot.start(); print(boot.started())\n",
        tmp_path,
    )
    assert done.returncode == 0 and done.stdout.strip() == "True", done.stderr
    assert "WARNING no upload folder: cannot use" in done.stderr and "set TMPDIR to a folder of yours" in done.stderr


def test_a_broken_front_model_is_one_warning_line_and_the_server_goes_on():
    code = (
        "import logging; import attnviz.server as server; from attnviz.errors import CheckpointError\n"
        "def broken(decode=None): raise CheckpointError('front.safetensors is not a readable safetensors file')\n"
        "server.front_page = broken\n"
        "logging.basicConfig(level=logging.WARNING, format='%(levelname)s %(message)s')\n"
        "from attnviz_app import frame; frame._warm_up()\n"
        "print('served on')"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "served on", done.stderr
    assert "skipped the front model: front.safetensors is not a readable" in done.stderr
    assert "Traceback" not in done.stderr
