"""The installed package's version, read without importing the library's heavy parts (torch)."""

from __future__ import annotations


def package_version() -> str:
    """The installed package's version (``attnviz.__version__``, ``attnviz --version``); "unknown" for a
    checkout on ``sys.path`` that was never installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("attnviz")
    except PackageNotFoundError:
        return "unknown"
