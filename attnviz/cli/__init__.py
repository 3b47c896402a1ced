"""The command line, ``attnviz`` (or ``python -m attnviz``): one module per command, registered in
``attnviz.cli.main.COMMANDS``."""

from attnviz.cli.main import main

__all__ = ["main"]
