"""``attnviz`` (or ``python -m attnviz``): the command table, the parser it builds and ``main``.

Each command is a module with ``HELP`` (a one-line summary), ``add_arguments(parser)`` and
``run(args) -> int``; ``COMMANDS`` registers them, and a run imports only its own. Exit codes: 0
on success, 2 with a one-line message on stderr for bad input, a bad data file, a bad checkpoint
or running out of memory (argparse uses 2 for bad flags too), 130 when interrupted (Ctrl+C) and 143
when terminated (SIGTERM), each with one line on stderr. Never a traceback for a user mistake.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import TextIO

from attnviz.cli.stopping import Terminated, stopped
from attnviz.cli.streams import CONTROL, QuietStream, writes_utf8
from attnviz.errors import AttnvizError

# the command, and its module in attnviz.cli: a run imports only the module of the command it runs
# (``evaluate`` loads no Plotly, ``list`` no torch); ``attnviz --help`` imports them all
COMMANDS: dict[str, str] = {
    "list": "list_models",
    "translate": "translate",
    "align": "align",
    "align-eval": "align_eval",
    "markup": "markup",
    "align-report": "align_report",
    "train": "train",
    "evaluate": "evaluate",
    "leaderboard": "leaderboard",
    "data": "data",
    "bench": "bench",
    "attribute": "attribute",
    "attention": "attention",
    "import-joeynmt": "import_joeynmt",
    "hf": "hf",
    "replay": "replay",
    "app": "app",
}


def command(name: str) -> ModuleType:
    """The module of the command ``name`` (a key of ``COMMANDS``), imported on first use."""
    return importlib.import_module(f"attnviz.cli.{COMMANDS[name]}")


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """One subcommand per entry of ``COMMANDS``; ``args.func`` is the command's ``run``. Given the
    arguments of a run that names a command, only that command's module is imported (and only its
    subcommand is built): a parser for anything else (``--help``, a misspelt command) has them all."""
    from attnviz.version import package_version

    chosen = _chosen(argv)
    parser = argparse.ArgumentParser(prog="attnviz", description="Explore attention in seq2seq models.")
    parser.add_argument("--version", action="version", version=f"attnviz {package_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in [chosen] if chosen else COMMANDS:
        module = command(name)
        p = sub.add_parser(name, help=module.HELP)
        module.add_arguments(p)
        p.set_defaults(func=module.run)
    return parser


def _chosen(argv: list[str] | None) -> str | None:
    """The command ``argv`` runs when its first word names one (options before it count as none)."""
    if not argv or argv[0] not in COMMANDS:
        return None
    return argv[0]


def main(argv: list[str] | None = None) -> int:
    """Run one command; user mistakes end in a one-line message and exit code 2."""
    if sys.stdout is None:  # `>&-`: print() would drop every result and exit 0
        if sys.stderr is not None:
            print("attnviz: error: standard output is closed; redirect it (> FILE or > /dev/null)", file=sys.stderr)
        return 2
    stderr = sys.stderr
    # `2>&-`: print(file=None) would put the messages into the results; a reader of the progress that
    # went away (`2>&1 | tee log`, tee killed) stops no training
    sys.stderr = QuietStream(stderr if stderr is not None else open(os.devnull, "w"))  # noqa: SIM115
    handler = _on_sigterm()
    try:
        return _main(argv)
    finally:
        sys.stderr = stderr
        if handler is not None:
            signal.signal(signal.SIGTERM, handler)


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated


def _on_sigterm() -> Callable | int | None:
    """Make SIGTERM a :class:`Terminated` for this run; the handler it replaces (None off the main
    thread, where Python cannot set one)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _raise_terminated)


def _main(argv: list[str] | None) -> int:
    if not writes_utf8(sys.stdout):
        sys.stdout.reconfigure(errors="backslashreplace")  # an ASCII or Latin-1 terminal: no traceback
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--version"]:  # at once: no command's module (torch, Plotly) is needed for it
        from attnviz.version import package_version

        print(f"attnviz {package_version()}")
        return 0
    try:
        from attnviz.store import ModelWarning  # imports torch: a Ctrl+C here is "interrupted" too

        args = build_parser(argv).parse_args(argv)
    except KeyboardInterrupt as e:
        return stopped("", e)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", ModelWarning)
            warnings.showwarning = _warn_one_line(args.command)
            return args.func(args)
    except AttnvizError as e:
        print(f"attnviz {args.command}: error: {_one_line(str(e))}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (`attnviz list | head`): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes
        return 0
    except OSError as e:
        message = f"{e.strerror or e}" + (f": {e.filename}" if e.filename else "")
        print(f"attnviz {args.command}: error: {_one_line(message)}", file=sys.stderr)
        return 2
    except (MemoryError, RuntimeError) as e:
        if str(e).startswith("Symlink loop"):  # Path.resolve on Python 3.11 and 3.12, where no check caught it
            print(f"attnviz {args.command}: error: {_one_line(str(e))[:300]}; remove the loop", file=sys.stderr)
            return 2
        if not _out_of_memory(e):
            raise  # a bug: keep the traceback
        detail = " ".join(str(e).split())[:200]
        print(
            f"attnviz {args.command}: error: out of memory ({detail}); use smaller sizes (--hidden, --emb, "
            "--batch, --len, --vocab) or a machine with more memory",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt as e:
        return stopped(args.command, e)


def _one_line(text: str) -> str:
    """``text`` with control characters written as escapes (a newline as ``\\n``): a file name
    holding a newline or a terminal escape stays on the message's one line."""
    return CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def _out_of_memory(e: BaseException) -> bool:
    """MemoryError, torch's OutOfMemoryError, or the CPU allocator's RuntimeError."""
    torch = sys.modules.get("torch")
    if isinstance(e, MemoryError) or (torch is not None and isinstance(e, torch.OutOfMemoryError)):
        return True
    text = str(e).lower()
    return "out of memory" in text or "can't allocate memory" in text or "cannot allocate memory" in text


def _warn_one_line(command: str) -> Callable[..., None]:
    """``warnings.showwarning`` for the CLI: a skipped model is one line on stderr."""

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        print(f"attnviz {command}: warning: {_one_line(str(message))}", file=sys.stderr)

    return show
