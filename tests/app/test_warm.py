"""The server's warm-up: app.py as a module is the server (st.App), as a script the pages."""

from __future__ import annotations

import subprocess
import sys

from streamlit.testing.v1 import AppTest

from attnviz.server import front_entry, front_page
from attnviz.store import catalog
from tests.support.paths import ROOT


def test_the_warm_up_loads_the_model_the_app_opens_on(app_env):
    entry = front_page()
    assert entry == front_entry(catalog.list_models())
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    assert at.selectbox(key="explore_task").value == "toy-fr"
    assert entry["name"] == "toyfr-general-luong"  # toy-fr's score in both styles, Luong's model


def test_imported_as_a_module_app_py_is_the_server_and_draws_nothing():
    code = (
        "import runpy, streamlit as st; ns = runpy.run_path('app.py', run_name='app'); print(type(ns['app']).__name__)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "App"
    assert "ScriptRunContext" not in done.stderr  # no page element was drawn outside a session


def test_a_broken_front_model_is_one_warning_line_and_the_server_goes_on():
    code = (
        "import logging, runpy; import attnviz.server as server; from attnviz.errors import CheckpointError\n"
        "def broken(): raise CheckpointError('front.safetensors is not a readable safetensors file')\n"
        "server.front_page = broken\n"
        "logging.basicConfig(level=logging.WARNING, format='%(levelname)s %(message)s')\n"
        "runpy.run_path('app.py', run_name='app')['_warm_up']()\n"
        "print('served on')"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "served on", done.stderr
    assert "skipped the front model: front.safetensors is not a readable" in done.stderr
    assert "Traceback" not in done.stderr
