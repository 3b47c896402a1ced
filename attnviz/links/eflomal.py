"""A real word aligner as a yardstick for attention: eflomal (Östling & Tiedemann 2016).

eflomal is a Bayesian HMM aligner with fertility, trained by Gibbs sampling; it is an optional
dependency (``pip install eflomal``, it compiles C). Word aligners learn from the text they
align, so the pairs to align are appended to a (larger) training corpus and aligned together.
Sampling is not seeded by eflomal itself: repeated runs differ slightly.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from attnviz.data import Link, Words
from attnviz.errors import ConfigError, DataError
from attnviz.links.extract import SYMMETRIC, symmetrise
from attnviz.links.goldfile import parse_pharaoh

if TYPE_CHECKING:
    from eflomal import Aligner

DIRECTIONS = ("forward", "reverse")


def _aligner(**options) -> Aligner:
    try:
        from eflomal import Aligner
    except ImportError:
        raise ConfigError(
            "eflomal is not installed; install it with `pip install eflomal==2.0.0` "
            "(it builds C code: a compiler, numpy and Cython are needed)"
        ) from None
    return Aligner(**options)


def _read_links(path: Path, n: int) -> list[set[Link]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    if len(lines) < n:
        raise DataError(f"eflomal wrote {len(lines)} alignment lines for {n} pairs; rerun it without quiet to see why")
    return [gold.sure for gold in parse_pharaoh(lines, name=f"eflomal's output {path.name}")]


def run_eflomal(
    pairs: list[tuple[Words, Words]],
    train: Iterable[tuple[Words, Words]] = (),
    method: str = "grow-diag-final-and",
    **options,
) -> list[list[Link]]:
    """Links ``(source_index, target_index)`` for each (source tokens, target tokens) pair.

    eflomal is trained on ``train`` plus ``pairs`` (more text, better links) and returns only
    the links of ``pairs``. ``method`` is ``"forward"``, ``"reverse"`` (one direction) or one of
    :data:`attnviz.links.extract.SYMMETRIC` to combine both; ``options`` go to ``eflomal.Aligner``
    (e.g. ``n_samplers``, ``rel_iterations``). Tokens must not contain spaces.
    """
    if method not in DIRECTIONS + SYMMETRIC:
        raise ConfigError(f"unknown method {method!r}; choose one of {', '.join(DIRECTIONS + SYMMETRIC)}")
    aligner = _aligner(**options)
    everything = [*train, *pairs]
    for n, (src, tgt) in enumerate(everything, start=1):
        if not src or not tgt:
            raise DataError(f"pair {n} has an empty side; eflomal needs words on both sides, drop the pair")
        if any(not t or any(c.isspace() for c in t) for t in (*src, *tgt)):
            raise DataError(f"pair {n} has an empty token or one containing a space; split it into words")
    with tempfile.TemporaryDirectory(prefix="attnviz-eflomal-") as tmp:
        fwd, rev = Path(tmp, "fwd"), Path(tmp, "rev")
        aligner.align(
            [" ".join(s) for s, _ in everything],
            [" ".join(t) for _, t in everything],
            links_filename_fwd=str(fwd),
            links_filename_rev=str(rev),
            quiet=True,
        )
        start = len(everything) - len(pairs)
        forward = _read_links(fwd, len(everything))[start:]
        reverse = _read_links(rev, len(everything))[start:]
    if method in DIRECTIONS:
        chosen = forward if method == "forward" else reverse
        return [sorted(links) for links in chosen]
    return [sorted(symmetrise(f, r, method)) for f, r in zip(forward, reverse, strict=True)]
