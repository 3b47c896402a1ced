"""The one question every page asks of a gold alignment file: how is it written? Its format (Pharaoh,
talp, NAACL) and index base (0 or 1), each chosen or left to auto-detect, as
:func:`attnviz.links.parse_gold` takes them (the CLI asks the same with ``--format`` and ``--base``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.links import BASES, FORMATS
from attnviz_app.app_pages.shared.common import escape_markdown

if TYPE_CHECKING:
    from types import ModuleType

    from streamlit.delta_generator import DeltaGenerator

AUTO = "auto"
FORMAT_NAMES = {
    AUTO: "Auto-detect",
    "pharaoh": "Pharaoh (i-j, i?j, i-j-P)",
    "talp": "talp (i-j, ipj)",
    "naacl": "NAACL (sent i j [S|P])",
}
BASE_NAMES = {AUTO: "Auto-detect", 0: "0 (first word is 0)", 1: "1 (first word is 1)"}
FORMAT_HELP = (
    "Pharaoh: one line per sentence pair, `i-j` a sure link, `i?j` or `i-j-P` a possible one. talp: the same with "
    "`ipj` for a possible link (the Hansards set). NAACL: one line per link, `sent_id i j [S|P] [confidence]`. "
    "Auto-detect reads the format from the lines."
)
BASE_HELP = (
    "What the file numbers the first word of a sentence. Auto-detect tries both numberings against the sentence "
    "lengths: an index equal to a sentence's length is 1-based, an index 0 is 0-based; when both fit, the format's "
    "usual base is taken (0 for Pharaoh, 1 for talp and NAACL)."
)
# the file at hand read in a (format, base): its convention line (GoldFile.convention()); DataError if it does not fit
Reader = Callable[[str, int | str], str]


def gold_convention(
    key: str, read: Reader | None = None, where: DeltaGenerator | ModuleType = st
) -> tuple[str, int | str]:
    """The format and index base radios in ``where`` (a column, or the page), keyed ``{key}_format`` and
    ``{key}_base``; returns ``(fmt, base)`` for :func:`attnviz.links.parse_gold` (``"auto"`` where the user
    leaves it to detection).

    ``read``, given once the file and its sentences are at hand, puts a caption under the radios with
    what auto-detect finds in the file. A file auto-detect cannot read gets no caption here: the caller
    reads it with the values returned and shows that one error.
    """
    fmt = where.radio(
        "Format",
        (AUTO, *FORMATS),
        format_func=FORMAT_NAMES.get,
        key=f"{key}_format",
        horizontal=True,
        help=FORMAT_HELP,
        persist_state="session",
    )
    base = where.radio(
        "Index base",
        (AUTO, *BASES),
        format_func=BASE_NAMES.get,
        key=f"{key}_base",
        horizontal=True,
        help=BASE_HELP,
        persist_state="session",
    )
    if read is not None:
        try:
            found = read(AUTO, AUTO)
        except AttnvizError:
            found = None
        if found:
            where.caption(escape_markdown(f"Auto-detect: {found}."))
    return fmt, base
