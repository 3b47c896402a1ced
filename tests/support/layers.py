"""The checker behind ``tests/test_layers.py``: what a module's source imports, resolved as Python
resolves it, and each rule of the package's shape as a function over source text, so a test can
plant a source and see the rule report it.

It reads the source with ``ast``: an import inside a function or under ``TYPE_CHECKING`` counts like
one at the top, so a late import hides neither a layer break nor a cycle; so do a module named by a
string (``importlib.import_module``, ``sys.modules``) and an attribute chain that reaches a subpackage
through ``attnviz``'s lazy loading.
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from tests.support.paths import ROOT

LIBRARY = ROOT / "attnviz"
APP = (
    "app",
    "pages",
    "attnviz_app",
)  # the Streamlit entry file and its pages: they import the library, never the reverse
# Lowest first. A module may import its own subpackage and any lower layer, never a higher one.
LAYERS = (
    ("errors", "version"),
    ("data",),
    ("devices",),
    ("model",),
    ("decoding",),
    ("store",),
    ("evaluation",),
    ("links",),
    ("external",),
    ("plots",),
    ("explain",),
    ("training",),
    ("server",),
    ("cli",),
    ("__init__", "__main__"),  # the package's front door: `import attnviz`, `python -m attnviz`
)
RANK = {part: i for i, parts in enumerate(LAYERS) for part in parts}


class Import(NamedTuple):
    """One import: the module it names, absolute ("" where a relative import climbs above the
    top-level package, which Python refuses), the names it takes from it (none for ``import m``),
    and its line."""

    module: str
    names: tuple[str, ...]
    line: int


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_of(path: Path) -> str:
    """The package a file's relative imports resolve against: the file's own for an ``__init__.py``."""
    name = module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def source_path(module: str) -> Path | None:
    """The file of a module of this checkout (``attnviz.data`` -> ``attnviz/data/__init__.py``), or None."""
    if not module:
        return None
    base = ROOT.joinpath(*module.split("."))
    return next((p for p in (base / "__init__.py", base.with_suffix(".py")) if p.is_file()), None)


def is_module(name: str) -> bool:
    """Whether ``name`` is a module: one of this checkout by its file, any other by the import system."""
    if source_path(name.partition(".")[0]) is not None or name.partition(".")[0] in APP:
        return source_path(name) is not None
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # its parent is no package
        return False


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    try:
        return importlib.util.resolve_name("." * node.level + (node.module or ""), package)
    except ImportError:  # beyond the top-level package
        return ""


LOADERS = {"import_module", "__import__"}  # a module named by a string: importlib's and the builtin


def _dotted(node: ast.expr) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]``; None for anything but names joined by dots."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id, *reversed(parts)] if isinstance(node, ast.Name) else None


def _named_module(node: ast.AST) -> str | None:
    """The module a call or lookup names by a string: ``import_module("attnviz.server")``,
    ``__import__(...)``, ``sys.modules.get(...)`` or ``sys.modules[...]``."""
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        name = _dotted(node.func) or []
        if name[-1:] and (name[-1] in LOADERS or name[-3:] == ["sys", "modules", "get"]):
            return str(node.args[0].value)
    if isinstance(node, ast.Subscript) and _dotted(node.value) == ["sys", "modules"]:
        key = node.slice
        return str(key.value) if isinstance(key, ast.Constant) else None
    return None


def imports(source: str, package: str) -> list[Import]:
    """Every import of ``source``, a module of ``package`` (relative imports resolve against it), and
    every other way it reaches a module: a module named by a string, and an attribute chain through
    the package's lazy loading (``import attnviz.errors`` then ``attnviz.training.fit``)."""
    tree = ast.parse(source)
    found = []
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}  # a chain's own parts
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [Import(a.name, (), node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append(Import(_absolute(node, package), tuple(a.name for a in node.names), node.lineno))
        elif (named := _named_module(node)) is not None:
            found.append(Import(named, (), node.lineno))
        elif isinstance(node, ast.Attribute) and id(node) not in inner:
            chain = _dotted(node)
            if chain and chain[0] == "attnviz" and len(chain) > 1:
                found.append(Import(".".join(chain[:-1]), (chain[-1],), node.lineno))
    return found


def file_imports(path: Path) -> list[Import]:
    return imports(path.read_text(encoding="utf-8"), package_of(path))


def reached(imp: Import) -> list[str]:
    """The modules an import loads for what it takes: ``from attnviz import server`` reaches
    ``attnviz.server``, ``from attnviz.store import load`` reaches ``attnviz.store``."""
    if not imp.names or source_path(imp.module.partition(".")[0]) is None:
        return [imp.module]
    return list(dict.fromkeys(f"{imp.module}.{n}" if is_module(f"{imp.module}.{n}") else imp.module for n in imp.names))


def part_of(module: str) -> str:
    """The layer part of an attnviz module: its subpackage, or the top-level module's name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def upward(own: str, found: Iterable[Import]) -> list[str]:
    """The imports in ``found`` that load a layer above ``own`` (``attnviz`` itself is the top one),
    or climb out of the package."""
    bad = []
    for imp in found:
        for target in reached(imp):
            if not target:
                bad.append(f"line {imp.line}: a relative import above the top-level package")
            elif target.split(".")[0] == "attnviz" and RANK.get(part_of(target), len(LAYERS)) > RANK[own]:
                bad.append(f"line {imp.line}: {target} ({part_of(target)}) is above {own}")
    return bad


def app_imports(found: Iterable[Import]) -> list[str]:
    """The imports in ``found`` of the Streamlit app: ``app.py`` or ``attnviz_app/``."""
    return [
        f"line {imp.line}: {target} is the Streamlit app; move what the library needs into attnviz"
        for imp in found
        for target in reached(imp)
        if target.split(".")[0] in APP
    ]


def exported(source: str) -> list[str]:
    """The names of ``__all__`` in ``source``."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    return []


def private_uses(own: str | None, found: Iterable[Import], public: Callable[[str], set[str]]) -> list[str]:
    """The imports in ``found`` that reach into another subpackage than ``own``: its modules, or
    names not in its ``__all__`` (``public(subpackage)``)."""
    subpackages = {p.parent.name for p in LIBRARY.glob("*/__init__.py")}
    bad = []
    for target, names, line in found:
        parts = target.split(".")
        if parts[0] != "attnviz" or len(parts) < 2 or parts[1] == own or parts[1] not in subpackages:
            continue
        if len(parts) > 2:
            bad.append(f"line {line}: imports the module {target}; import its public names from attnviz.{parts[1]}")
        elif hidden := sorted(set(names) - public(parts[1])):
            bad.append(f"line {line}: {hidden} are not in attnviz.{parts[1]}.__all__")
    return bad


def _module_level(nodes: Iterable[ast.AST]) -> Iterator[ast.stmt]:
    """The statements of ``nodes``, in order, with those nested in an if or try, not in a def or class."""
    for node in nodes:
        if isinstance(node, ast.stmt):
            yield node
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            inner = (c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt | ast.excepthandler))
            yield from _module_level(inner)


def _binding(tree: ast.Module, name: str) -> ast.stmt | None:
    """The last module-level statement that binds ``name``."""
    last = None
    for node in _module_level(tree.body):
        if isinstance(node, ast.Import | ast.ImportFrom):
            bound = [a.asname or a.name.partition(".")[0] for a in node.names]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound = [node.name]
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        else:
            continue
        last = node if name in bound else last
    return last


def _holds_module(module: str, name: str, seen: frozenset[tuple[str, str]]) -> bool:
    path = source_path(module)
    if path is None:  # outside the checkout: the import system's answer
        return is_module(f"{module}.{name}")
    return holds_module(path.read_text(encoding="utf-8"), module, package_of(path), name, seen)


def holds_module(
    source: str, module: str, package: str, name: str, seen: frozenset[tuple[str, str]] = frozenset()
) -> bool:
    """Whether ``name``, in the namespace of ``module`` (whose source is ``source``; its relative
    imports resolve against ``package``), is a module object, following the imports that bind it."""
    node = None if (module, name) in seen else _binding(ast.parse(source), name)
    seen = seen | {(module, name)}
    if node is None:  # unbound, or bound in a cycle: a submodule, as `import *` and the import system find it
        return is_module(f"{module}.{name}")
    if isinstance(node, ast.Import):
        return True
    if isinstance(node, ast.ImportFrom):
        original = next(a.name for a in node.names if (a.asname or a.name) == name)
        base = _absolute(node, package)
        return bool(base) and _holds_module(base, original, seen)
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id != name:
        return holds_module(source, module, package, node.value.id, seen)
    return False


def modules_in_all(source: str, module: str, package: str) -> list[str]:
    """The names in ``__all__`` of ``source`` (the module ``module`` of ``package``) that are modules."""
    return [
        f"__all__ exports the module {name}; export the names its callers need instead"
        for name in exported(source)
        if holds_module(source, module, package, name)
    ]
