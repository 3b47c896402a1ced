"""The package's shape: role subpackages in layers, no cycles, no Streamlit in the library, no app in
the library, no torch in the app's pages, no module in an ``__all__``, and the pages and other
subpackages use each subpackage's public names.

The rules are functions of ``tests/support/layers.py`` over source text (read with ``ast``); every
import counts, a late one inside a function or under TYPE_CHECKING too, so neither a layer break
nor a cycle can hide in a lazy import. The last tests plant a breach of each rule and see it reported.
"""

from __future__ import annotations

import pytest

from tests.support.layers import (
    LIBRARY,
    RANK,
    ROOT,
    Import,
    app_imports,
    exported,
    file_imports,
    imports,
    module_name,
    modules_in_all,
    package_of,
    part_of,
    private_uses,
    reached,
    upward,
)

LIBRARY_FILES = sorted(LIBRARY.rglob("*.py"))
APP_FILES = sorted([ROOT / "app.py", *(ROOT / "attnviz_app").rglob("*.py")])


def _id(path):
    return str(path.relative_to(ROOT))


def test_every_library_module_has_a_layer():
    unknown = {part_of(module_name(p)) for p in LIBRARY_FILES} - set(RANK)
    assert not unknown, f"add {unknown} to LAYERS in tests/support/layers.py"


@pytest.mark.parametrize("path", LIBRARY_FILES, ids=_id)
def test_no_import_goes_up_a_layer(path):
    bad = upward(part_of(module_name(path)), file_imports(path))
    assert not bad, bad


@pytest.mark.parametrize("path", LIBRARY_FILES, ids=_id)
def test_the_library_does_not_import_the_app(path):
    bad = app_imports(file_imports(path))
    assert not bad, bad


def _module_graph() -> dict[str, set[str]]:
    known = {module_name(p) for p in LIBRARY_FILES}
    graph = {}
    for path in LIBRARY_FILES:
        reach = {target for imp in file_imports(path) for target in reached(imp)}
        graph[module_name(path)] = (reach & known) - {module_name(path)}
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
    return set(exported((LIBRARY / subpackage / "__init__.py").read_text(encoding="utf-8")))


@pytest.mark.parametrize("path", LIBRARY_FILES + APP_FILES, ids=_id)
def test_other_subpackages_are_used_through_their_public_names(path):
    """From outside a subpackage, ``from attnviz.<sub> import name`` with ``name`` in its
    ``__all__``; never ``attnviz.<sub>.<module>``."""
    own = part_of(module_name(path)) if path.is_relative_to(LIBRARY) else None
    bad = private_uses(own, file_imports(path), _public)
    assert not bad, bad


@pytest.mark.parametrize("path", LIBRARY_FILES, ids=_id)
def test_no_module_is_exported(path):
    """``__all__`` holds names a caller uses, never a module whose private names it would reach."""
    bad = modules_in_all(path.read_text(encoding="utf-8"), module_name(path), package_of(path))
    assert not bad, bad


@pytest.mark.parametrize("path", LIBRARY_FILES, ids=_id)
def test_the_library_does_not_import_streamlit(path):
    assert not [t for t, _, _ in file_imports(path) if t.split(".")[0] == "streamlit"]


@pytest.mark.parametrize("path", APP_FILES, ids=_id)
def test_the_app_does_not_import_torch(path):
    assert not [t for t, _, _ in file_imports(path) if t.split(".")[0] == "torch"]


# The rules above would pass on nothing: each is shown a planted breach, and a clean source.


def test_relative_imports_resolve_against_the_importing_package():
    assert imports("from . import tasks", "attnviz.data") == [Import("attnviz.data", ("tasks",), 1)]
    assert imports("from ..server import warm", "attnviz.model") == [Import("attnviz.server", ("warm",), 1)]
    assert imports("from ... import server", "attnviz.data.sub") == [Import("attnviz", ("server",), 1)]
    assert imports("from ... import server", "attnviz.data") == [Import("", ("server",), 1)]
    assert reached(Import("attnviz", ("server", "load"), 1)) == ["attnviz.server", "attnviz"]
    assert reached(Import("attnviz.data", ("tasks", "Pair"), 1)) == ["attnviz.data.tasks", "attnviz.data"]


@pytest.mark.parametrize(
    "source",
    [
        "def f():\n    from ..server import warm\n",  # a lazy import counts
        "from attnviz import server\n",
        "from .. import server\n",
        "import attnviz.server.jobs\n",
        "from attnviz import load\n",  # the front door imports every layer
        "from ...server import jobs\n",  # above the top-level package: Python refuses it
        "import attnviz.errors\nattnviz.training.fit(model)\n",  # through the package's lazy loading
        "import attnviz\nrun = attnviz.server.jobs\n",
        'import importlib\nimportlib.import_module("attnviz.cli")\n',
        'import sys\nsys.modules.get("attnviz.server")\n',
        'import sys\nsys.modules["attnviz.training.fit"]\n',
    ],
)
def test_the_checker_sees_an_upward_import(source):
    found = imports(source, "attnviz.model")
    assert upward("model", found)


def test_an_import_is_upward_only_from_below():
    found = imports("from .. import server", "attnviz.model")
    assert upward("model", found) and not upward("cli", found) and not upward("server", found)


@pytest.mark.parametrize(
    "source",
    [
        "import attnviz_app.app_pages.shared\n",
        "from attnviz_app.app_pages.shared import common\n",
        "import attnviz_app\n",
        "import pages.shared\n",
        "import app\n",
        "import pages\n",
    ],
)
def test_the_checker_sees_the_library_import_the_app(source):
    assert app_imports(imports(source, "attnviz.data"))


@pytest.mark.parametrize(
    "source",
    [
        '__all__ = ["tasks"]\n',  # a submodule named, unbound: `from attnviz.data import *` loads it
        'from attnviz.data import tasks\n__all__ = ["tasks"]\n',
        'from . import tasks as generators\n__all__ = ["generators"]\n',
        'from attnviz.data.spec import tasks\n__all__ = ["tasks"]\n',  # spec imported the module
        'import numpy as np\n__all__ = ["np"]\n',
    ],
)
def test_the_checker_sees_a_module_in_all(source):
    assert modules_in_all(source, "attnviz.data", "attnviz.data")


def test_the_checker_sees_a_private_use_of_another_subpackage():
    found = imports("from attnviz.data.tasks import dates\nfrom attnviz.links import goldfile\n", "attnviz.cli")
    assert len(private_uses("cli", found, lambda sub: {"Pair"})) == 2
    by_string = imports('sys.modules.get("attnviz.server.upload_folder")\nattnviz.store.files.slugify("x")\n', "app")
    assert len(private_uses(None, by_string, lambda sub: {"remove_server_folder", "slugify"})) == 2
    own = imports("from attnviz.links import goldfile\n", "attnviz.links")
    assert not private_uses("links", own, lambda sub: set())  # a subpackage's own modules are its own business


def test_a_clean_source_breaks_no_rule():
    source = (
        "from attnviz.errors import DataError\n"
        "from . import tasks\n"
        "from .pairs import Pair\n"
        "def f():\n    from attnviz.data import TASKS\n"
        '__all__ = ["DataError", "Pair", "TASKS"]\n'
    )
    found = imports(source, "attnviz.data")
    assert not upward("data", found)
    assert not app_imports(found)
    assert not private_uses("data", found, lambda sub: {"DataError"})
    assert not modules_in_all(source, "attnviz.data", "attnviz.data")


def test_the_checker_sees_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
