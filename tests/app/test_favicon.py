"""The app's favicon is a file it serves itself: an emoji or a material icon name would make
every page load fetch it from a CDN, which an offline app cannot reach."""

import ast
import os
from pathlib import Path

from attnviz_app import APP_DIR

APP = Path(__file__).resolve().parents[2] / "attnviz_app" / "frame.py"  # the frame both entry files run


def test_page_icon_is_a_local_file_or_none():
    tree = ast.parse(APP.read_text(encoding="utf-8"))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "set_page_config"]
    assert len(calls) == 1
    icon = next((k.value for k in calls[0].keywords if k.arg == "page_icon"), None)
    if icon is None or (isinstance(icon, ast.Constant) and icon.value is None):
        return  # Streamlit's own favicon, shipped with its frontend
    if isinstance(icon, ast.Name):  # a module-level constant: evaluate what it is assigned
        (assign,) = [n for n in tree.body if isinstance(n, ast.Assign) and icon.id in [t.id for t in n.targets]]
        icon = assign.value
    names = {"os": os, "Path": Path, "APP_DIR": APP_DIR, "__file__": str(APP)}
    value = eval(compile(ast.Expression(icon), str(APP), "eval"), names)
    assert Path(value).is_file() and Path(value).suffix == ".png", value
