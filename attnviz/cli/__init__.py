"""The command line, ``attnviz`` (or ``python -m attnviz``): one module per command."""

from attnviz.cli.main import main

__all__ = ["main"]
