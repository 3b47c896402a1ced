"""Running the command line in-process."""

from __future__ import annotations

from attnviz.cli.main import main


def run(capsys, *argv):
    """``attnviz *argv``: its exit code, standard output and standard error."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err
