"""The app's favicon is a file it serves itself: an emoji or a material icon name would make
every page load fetch it from a CDN, which an offline app cannot reach. It is set before the
navigation: a browser that gets the navigation first shows the page's material icon, fetched
from a CDN (tests/browser/test_browser_walk.py sees no request leave the app)."""

import ast
import os
from pathlib import Path

from attnviz_app import APP_DIR

APP = Path(__file__).resolve().parents[2] / "attnviz_app" / "frame.py"  # the frame both entry files run


def _calls(tree: ast.AST, name: str) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == name]


def test_page_icon_is_a_local_file_set_before_the_navigation():
    tree = ast.parse(APP.read_text(encoding="utf-8"))
    with_icon = [c for c in _calls(tree, "set_page_config") if any(k.arg == "page_icon" for k in c.keywords)]
    assert len(with_icon) == 1
    (navigation,) = _calls(tree, "navigation")
    assert with_icon[0].lineno < navigation.lineno
    icon = next(k.value for k in with_icon[0].keywords if k.arg == "page_icon")
    if icon is None or (isinstance(icon, ast.Constant) and icon.value is None):
        return  # Streamlit's own favicon, shipped with its frontend
    if isinstance(icon, ast.Name):  # a module-level constant: evaluate what it is assigned
        (assign,) = [n for n in tree.body if isinstance(n, ast.Assign) and icon.id in [t.id for t in n.targets]]
        icon = assign.value
    names = {"os": os, "Path": Path, "APP_DIR": APP_DIR, "__file__": str(APP)}
    value = eval(compile(ast.Expression(icon), str(APP), "eval"), names)
    assert Path(value).is_file() and Path(value).suffix == ".png", value
