"""Exceptions that attnviz raises for user mistakes.

Every message says what went wrong and how to fix it. The CLI prints them as one line and
exits 2; the app shows them with ``st.error``. Anything else escaping is a bug.
"""

from __future__ import annotations


class AttnvizError(ValueError):
    """Base class of every error caused by input rather than by a bug."""


class InputError(AttnvizError):
    """Text or arguments a model cannot take (empty, too long, out of range)."""


class DataError(AttnvizError):
    """A data file or folder that cannot be read as pairs (names the file and line)."""


class CheckpointError(AttnvizError):
    """A checkpoint that is missing, corrupt, foreign, unsafe or made for another version."""


class ConfigError(AttnvizError):
    """A configuration value that is unknown or out of range."""
