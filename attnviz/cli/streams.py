"""The command line's terminal: which characters a line may not show, whether a stream writes UTF-8,
standard error that outlives its reader, and arguments in bytes the locale cannot read. Light on
purpose: the entry point imports it before anything that loads torch."""

from __future__ import annotations

import os
import re
import sys
from typing import TextIO

_CONTROLS = r"\x00-\x1f\x7f-\x9f"
CONTROL = re.compile(f"[{_CONTROLS}]")  # control characters: a newline, a terminal escape
# and the marks that turn the direction of the rest of a terminal line
UNPRINTABLE = re.compile(rf"[{_CONTROLS}\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def writes_utf8(stream: TextIO) -> bool:
    """Whether ``stream`` writes UTF-8 (a file or terminal of another encoding cannot write every letter)."""
    return (getattr(stream, "encoding", None) or "utf-8").lower().replace("-", "") in ("utf8", "utf8sig")


class QuietStream:
    """Standard error that stops writing, instead of raising, once its reader has gone away
    (`attnviz train 2>&1 | tee log` with tee killed): a progress bar never ends a training."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._stream = open(os.devnull, "w")  # noqa: SIM115
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._stream = open(os.devnull, "w")  # noqa: SIM115

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def sentence(arg: str) -> str:
    """A sentence argument (argparse's ``type``) as UTF-8 text: Python decodes bytes the locale cannot read
    as lone surrogates, which the tokenizer turns into spaces (`Jos\\xe9` read as `Jos`, `M\\xc3\\xa4dchen`
    under LC_ALL=C as `M dchen`). Their bytes are read as UTF-8 again, and what still does not decode is
    U+FFFD, with one note. Paths are left as Python gives them: their bytes name the file."""
    if not any("\udc80" <= c <= "\udcff" for c in arg):
        return arg
    text = os.fsencode(arg).decode("utf-8", "replace")
    if "\ufffd" in text:
        print(
            f"attnviz: warning: an argument is not UTF-8; its bad bytes are read as \ufffd: {text!r}", file=sys.stderr
        )
    return text
