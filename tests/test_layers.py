"""The package's shape: role subpackages in layers, no cycles, no Streamlit in the library,
no torch in the app's pages, and the pages and other subpackages use each subpackage's public names.

Reads the source with ``ast`` (imports inside functions and under TYPE_CHECKING count too), so a
cycle cannot hide in a late import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "attnviz"
# Lowest first. A module may import its own subpackage and any lower layer, never a higher one.
LAYERS = (
    ("errors",),
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
SUBPACKAGES = tuple(p.name for p in LIBRARY.iterdir() if (p / "__init__.py").is_file())


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, package: str | None = None) -> list[tuple[str, list[str], int]]:
    """Every ``import``: (module, names imported from it, line), relative imports resolved
    against ``package`` (by default the file's own)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    if package is None:
        package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, [], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.append((base, [a.name for a in node.names], node.lineno))
    return found


def part_of(module: str) -> str:
    """The layer part of an attnviz module: its subpackage, or the top-level module's name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


LIBRARY_FILES = sorted(LIBRARY.rglob("*.py"))
APP_FILES = sorted([ROOT / "app.py", *(ROOT / "attnviz_app").rglob("*.py")])


def test_every_library_module_has_a_layer():
    unknown = {part_of(module_name(p)) for p in LIBRARY_FILES} - set(RANK)
    assert not unknown, f"add {unknown} to LAYERS in tests/test_layers.py"


def upward(own: str, found: list[tuple[str, list[str], int]]) -> list[str]:
    """The imports in ``found`` that reach a layer above ``own``."""
    return [
        f"line {line}: {target} ({part_of(target)}) is above {own}"
        for target, _, line in found
        if target.startswith("attnviz.") and RANK[part_of(target)] > RANK[own]
    ]


@pytest.mark.parametrize("path", LIBRARY_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_import_goes_up_a_layer(path):
    bad = upward(part_of(module_name(path)), imports(path))
    assert not bad, bad


def _module_graph() -> dict[str, set[str]]:
    known = {module_name(p) for p in LIBRARY_FILES}
    graph = {}
    for path in LIBRARY_FILES:
        edges = set()
        for target, names, _ in imports(path):
            if not target.startswith("attnviz"):
                continue
            for name in names or [""]:  # `from attnviz.store import catalog` imports the module catalog
                full = f"{target}.{name}" if name and f"{target}.{name}" in known else target
                if full in known:
                    edges.add(full)
        graph[module_name(path)] = edges - {module_name(path)}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` (module -> modules it imports), or None."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node], _ = 1, stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node], _ = 2, stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_no_import_cycle():
    cycle = find_cycle(_module_graph())
    assert cycle is None, " -> ".join(cycle)


def _public(subpackage: str) -> set[str]:
    tree = ast.parse((LIBRARY / subpackage / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
    return set()


@pytest.mark.parametrize("path", LIBRARY_FILES + APP_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_other_subpackages_are_used_through_their_public_names(path):
    """From outside a subpackage, ``from attnviz.<sub> import name`` with ``name`` in its
    ``__all__``; never ``attnviz.<sub>.<module>``."""
    own = part_of(module_name(path)) if path.is_relative_to(LIBRARY) else None
    bad = []
    for target, names, line in imports(path):
        parts = target.split(".")
        if parts[0] != "attnviz" or len(parts) < 2 or parts[1] == own or parts[1] not in SUBPACKAGES:
            continue
        if len(parts) > 2:
            bad.append(f"line {line}: imports the module {target}; import its public names from attnviz.{parts[1]}")
            continue
        hidden = sorted(set(names) - _public(parts[1]))
        if hidden:
            bad.append(f"line {line}: {hidden} are not in attnviz.{parts[1]}.__all__")
    assert not bad, bad


@pytest.mark.parametrize("path", LIBRARY_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_library_does_not_import_streamlit(path):
    assert not [t for t, _, _ in imports(path) if t.split(".")[0] == "streamlit"]


@pytest.mark.parametrize("path", APP_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_app_does_not_import_torch(path):
    assert not [t for t, _, _ in imports(path) if t.split(".")[0] == "torch"]


def test_the_checker_sees_an_upward_import_and_a_cycle(tmp_path):
    """The rules above would pass on nothing: prove they catch what they look for."""
    sample = tmp_path / "m.py"
    sample.write_text("def f():\n    from ..server import warm\n", encoding="utf-8")
    found = imports(sample, package="attnviz.model")
    assert found == [("attnviz.server", ["warm"], 2)]
    assert upward("model", found) and not upward("cli", found)
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
