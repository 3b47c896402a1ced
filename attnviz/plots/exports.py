"""What the Explore page lets users download: pure functions from an Alignment to file contents."""

from __future__ import annotations

import pandas as pd

from attnviz.data import MARK, join_pieces
from attnviz.decoding import Alignment
from attnviz.external import attention_json
from attnviz.plots.heatmap import alignment_matrix

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # spreadsheet formula injection


def safe_cell(text: str) -> str:
    """Text safe to open in a spreadsheet: one that would start a formula gets a leading quote.
    Every CSV the project writes passes its text cells through here (:func:`csv_text`)."""
    return "'" + text if text.lstrip(" ").startswith(_FORMULA_START) else text  # " =1": some spreadsheets trim


def csv_text(frame: pd.DataFrame, float_format: str | None = None) -> str:
    """``frame`` as CSV with every text cell and column name passed through :func:`safe_cell`."""
    safe = frame.rename(columns=lambda c: safe_cell(c) if isinstance(c, str) else c)
    safe = safe.apply(lambda col: col.map(lambda v: safe_cell(v) if isinstance(v, str) else v))
    return safe.to_csv(index=False, float_format=float_format)


def matrix_frame(al: Alignment, values: str = "weights") -> pd.DataFrame:
    """``[tgt, src]`` weights or raw scores: one row per target step, one column per source token."""
    z = alignment_matrix(al, values)  # [tgt, src], NaN outside a local window
    columns = list(al.source_tokens)
    frame = pd.DataFrame(z, columns=columns)
    frame.insert(0, "target", list(al.target_tokens))
    frame.insert(0, "step", range(len(al.target_tokens)))
    return frame


def matrix_csv(al: Alignment, values: str = "weights") -> str:
    """:func:`matrix_frame` as CSV (blank cells where a score is -inf)."""
    return csv_text(matrix_frame(al, values), float_format="%.6g")


def alignment_json(al: Alignment) -> str:
    """Everything the decode recorded (:meth:`Alignment.to_dict`) as an attention file
    (:func:`attnviz.external.attention_json`): the Your model page and ``attnviz attention`` read it back."""
    return attention_json(al)


def pharaoh_text(al: Alignment) -> str:
    """The argmax alignment in Pharaoh ``source-target`` format, one line."""
    return al.to_pharaoh() + "\n"


def changed_steps(a: list[str], b: list[str]) -> list[int]:
    """Target steps where two token lists differ (a step only one of them has counts as changed)."""
    return [t for t in range(max(len(a), len(b))) if (a[t] if t < len(a) else None) != (b[t] if t < len(b) else None)]


def step_table(a: list[str], b: list[str], names: tuple[str, str]) -> pd.DataFrame:
    """The two targets step by step with a ``changed`` column."""
    n = max(len(a), len(b))
    changed = set(changed_steps(a, b))
    return pd.DataFrame(
        {
            "step": range(n),
            names[0]: [a[t] if t < len(a) else "" for t in range(n)],
            names[1]: [b[t] if t < len(b) else "" for t in range(n)],
            "changed": [t in changed for t in range(n)],
        }
    )


def replace_token(tokens: list[str], index: int, word: str, char_level: bool) -> str:
    """The source text with token ``index`` replaced by ``word`` (tokens without ``<eos>``).
    A subword piece that continues its word (``orange@@``) is replaced in place, and the
    pieces are joined back into words."""
    if tokens[index].endswith(MARK) and not word.endswith(MARK):
        word += MARK
    out = [*tokens[:index], word, *tokens[index + 1 :]]
    return "".join(out) if char_level else " ".join(join_pieces(out))
