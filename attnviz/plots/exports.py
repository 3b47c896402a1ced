"""What the Explore page lets users download: pure functions from an Alignment to file contents."""

from __future__ import annotations

import re
import unicodedata

import numpy as np
import pandas as pd

from attnviz.data import MARK, join_pieces, to_pharaoh
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
    """``[tgt, src]`` weights or raw scores: one row per target step, one column per source token,
    named ``position:token`` (``3:the``) so that a word the sentence repeats names two columns."""
    z = alignment_matrix(al, values)  # [tgt, src], NaN outside a local window
    columns = [f"{s}:{token}" for s, token in enumerate(al.source_tokens)]
    frame = pd.DataFrame(z, columns=columns)
    frame.insert(0, "target", list(al.target_tokens))
    frame.insert(0, "step", range(len(al.target_tokens)))
    return frame


def matrix_csv(al: Alignment, values: str = "weights") -> str:
    """:func:`matrix_frame` as CSV (blank cells where a score is -inf)."""
    return csv_text(matrix_frame(al, values), float_format="%.6g")


def alignment_json(al: Alignment, name: str | None = None, sentence: str = "") -> str:
    """Everything the decode recorded (:meth:`Alignment.to_dict`) as an attention file
    (:func:`attnviz.external.attention_json`): the Your model page and ``attnviz attention`` read it
    back, as a matrix called ``name`` (the model's name; without it, ``attention``) with the
    sentence in the metadata when given."""
    if name is None:
        return attention_json(al)
    return attention_json({name: al}, metadata={"sentence": sentence} if sentence else None)


def pair_json(panels: dict[str, Alignment], models: dict[str, str], sentence: str) -> str:
    """Several decodes of one sentence in one attention file (:func:`attnviz.external.attention_json`):
    one matrix per panel (``"Bahdanau"``, ``"Luong"``) with everything its decode recorded, and the
    sentence and each panel's model in the metadata. The Your model page and ``attnviz attention``
    read it back."""
    meta = {"sentence": sentence, "models": {name: models.get(name, "") for name in panels}}
    return attention_json(dict(panels), metadata=meta)


def pair_csv(panels: dict[str, Alignment], models: dict[str, str], values: str = "weights") -> str:
    """Several decodes' matrices in one long CSV: one row per (panel, target step, source token)."""
    frames = []
    for name, al in panels.items():
        z = alignment_matrix(al, values)  # [tgt, src]
        t, s = np.meshgrid(range(z.shape[0]), range(z.shape[1]), indexing="ij")  # [tgt, src] each
        frames.append(pd.DataFrame({
            "panel": name, "model": models.get(name, ""), "step": t.ravel(),
            "target": np.array(al.target_tokens)[t.ravel()], "position": s.ravel(),
            "source": np.array(al.source_tokens)[s.ravel()], values: z.ravel(),
        }))  # fmt: skip
    return csv_text(pd.concat(frames, ignore_index=True), float_format="%.6g")


def pharaoh_text(al: Alignment, with_eos: bool = False) -> str:
    """The argmax alignment in Pharaoh ``source-target`` format, one line. Links to the source's
    ``<eos>`` and the target's ``<eos>`` step are markers, not words: left out unless ``with_eos``."""
    n_src, n_tgt = len(al.source_text_tokens), len(al.output_tokens)
    links = [(s, t) for s, t in al.hard_links() if with_eos or (s < n_src and t < n_tgt)]
    return to_pharaoh(links) + "\n"


def slug(text: str, max_len: int = 40) -> str:
    """A piece of a file name from any text: ASCII letters, digits and ``-`` (accents dropped,
    everything else a dash), cut at a word boundary; ``""`` when nothing is left."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    out = re.sub(r"[^A-Za-z0-9]+", "-", ascii_text).strip("-")
    if len(out) > max_len:
        out = out[:max_len].rsplit("-", 1)[0] if "-" in out[:max_len] else out[:max_len]
    return out.strip("-")


def models_slug(names: list[str], max_len: int = 150) -> str:
    """Several models' names as one piece of a file name that keeps every name whole: the dash
    parts they all begin with once, then each name's rest, joined by ``-vs-``
    (``multi30k-de-en-additive-bahdanau-vs-luong``). Where that is longer than ``max_len``, the
    shared beginning and how many models (``multi30k-de-en-5-models``)."""
    names = [slug(n, 10_000) for n in dict.fromkeys(names)]
    names = [n for n in names if n]
    if len(names) <= 1:
        return names[0] if names else ""
    parts = [n.split("-") for n in names]
    shared = 0  # leading dash parts every name has, leaving each name at least one of its own
    while shared < min(map(len, parts)) - 1 and len({p[shared] for p in parts}) == 1:
        shared += 1
    head = parts[0][:shared]
    whole = "-".join([*head, "-vs-".join("-".join(p[shared:]) for p in parts)])
    return whole if len(whole) <= max_len else "-".join([*head, f"{len(names)}-models"])


def file_stem(model: str, sentence: str, what: str = "") -> str:
    """A download's file name without extension: the model's name (or :func:`models_slug` of
    several, never cut), a slug of the sentence, what the file holds
    (``toy-fr-general-luong-the-cat-eats-weights``)."""
    parts = [slug(model, 200), slug(sentence), slug(what, 40)]
    return "-".join(p for p in parts if p) or "attnviz"


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
