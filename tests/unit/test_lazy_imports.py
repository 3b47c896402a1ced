"""The package and the command line import only what they use: `import attnviz` loads no torch,
pandas or Plotly, and a command imports its own module alone."""

from __future__ import annotations

import json
import subprocess
import sys

import attnviz
from tests.support.paths import ROOT


def _modules_after(code: str) -> set[str]:
    """The heavy modules a fresh interpreter holds after running ``code``."""
    probe = f"import sys, json\n{code}\nprint(json.dumps(sorted(set(sys.modules) & {{'torch', 'pandas', 'plotly'}})))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_import_attnviz_loads_nothing_heavy():
    assert _modules_after("import attnviz") == set()


def test_every_public_name_resolves_to_its_subpackage_object():
    assert sorted(attnviz.__all__) == sorted(attnviz._WHERE)  # the literal list and the lookup table agree
    for name in attnviz.__all__:
        value = getattr(attnviz, name)
        assert value is not None
        assert name in dir(attnviz)
    from attnviz.store import load

    assert attnviz.load is load


def test_type_checkers_see_every_public_name_where_it_is_imported_from():
    # the TYPE_CHECKING imports are what mypy, pyright and editors read: the same names and modules
    import ast

    tree = ast.parse((ROOT / "attnviz" / "__init__.py").read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    seen = {alias.name: node.module for node in block.body for alias in node.names}
    assert seen == attnviz._WHERE
    assert (ROOT / "attnviz" / "py.typed").is_file()


def test_a_subpackage_is_reached_from_the_package_as_the_docs_write_it():
    code = (
        "import attnviz\n"
        "assert callable(attnviz.links.for_reading) and callable(attnviz.external.word_links)\n"
        "assert callable(attnviz.plots.figure_images) and 'links' in dir(attnviz)"
    )
    assert _modules_after(code) >= {"torch", "plotly"}  # loaded when asked for, not before


def test_an_unknown_name_is_an_attribute_error():
    try:
        attnviz.no_such_name  # noqa: B018
    except AttributeError as e:
        assert "no_such_name" in str(e)
    else:
        raise AssertionError("an unknown attribute resolved")


def test_a_command_imports_its_own_module_only():
    loaded = _modules_after(
        "from attnviz.cli.main import build_parser\n"
        "build_parser(['evaluate', '--model', 'x'])\n"
        "assert 'attnviz.cli.align_report' not in sys.modules and 'attnviz.cli.hf' not in sys.modules"
    )
    assert "plotly" not in loaded and "pandas" not in loaded
