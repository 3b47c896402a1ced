"""A Hugging Face tokenizer's pieces as attnviz tokens, so the merge attnviz uses for its own BPE
models (``@@`` ends a piece that does not end its word: :func:`attnviz.data.word_spans`) reads
them as words.

Each tokenizer family marks word boundaries its own way; the marker is found once per tokenizer,
from its vocabulary (:func:`word_marker`):

* ``▁`` (SentencePiece: Marian, T5, mBART, NLLB, M2M100) and ``Ġ`` (byte-level BPE: BART) start a word;
* ``##`` (WordPiece) continues one;
* ``</w>`` (the original BPE: FSMT) ends one.

Special tokens are not words: on the source side every special token (``</s>``, ``<s>``, a
language code) is gathered into the one final ``<eos>`` column (attention parked on a special
token, the NULL alignment ``<eos>`` stands for in attnviz); on the target side a language code
forced as the first token (or after ``</s>``, as mBART-cc25 puts it) is left out and the final
``</s>`` becomes ``<eos>``. Under byte-level BPE the pieces that write one character between them
(``☕`` is three byte pieces) make one token, so a token never holds half a character. A bare ``▁``
(SentencePiece's word boundary as a piece of its own) joins the piece after it: on the source side
its column is summed into that token's, on the target side its row is not one of the token's rows
(:attr:`Grouping.rows`), as it writes no letter. A token's row is then the mean of the rows of pieces
that write its text, and a word's row (a mean over its tokens) weighs each such piece alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from attnviz.data import EOS, MARK

MARKERS = {"▁": "start", "Ġ": "start", "##": "continue", "</w>": "end"}


def word_marker(vocab: list[str]) -> str | None:
    """The word-boundary marker most of the vocabulary uses (a key of :data:`MARKERS`), or ``None``."""
    counts = {
        marker: sum(1 for p in vocab if (p.endswith(marker) if kind == "end" else p.startswith(marker)))
        for marker, kind in MARKERS.items()
    }
    best = max(counts, key=counts.get)
    return best if counts[best] > 0 else None


@dataclass
class Grouping:
    """Which tokenizer positions make each attnviz token."""

    tokens: list[str]  # attnviz tokens: "pie@@" pieces, words, "<eos>" last when there is one
    groups: list[list[int]]  # for each token, its positions in the tokenizer's sequence
    markers: frozenset[int] = frozenset()  # positions of bare word-start markers joined to the piece after them

    @property
    def rows(self) -> list[list[int]]:
        """For each token, the positions whose attention rows it averages: its group without a bare
        marker (which writes no letter), unless the marker is all the group holds."""
        return [[i for i in g if i not in self.markers] or g for g in self.groups]


def _byte_table() -> dict[str, int]:
    """Byte-level BPE's printable stand-ins (``Ġ`` for a space, ``Ã`` for byte 0xC3) mapped back to their
    bytes: printable Latin-1 bytes stand for themselves, the rest take the code points from 256 up in
    byte order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAC + 1), *range(0xAE, 0xFF + 1)]
    table = {chr(b): b for b in printable}
    shifted = (b for b in range(256) if b not in table.values())
    table.update({chr(256 + k): b for k, b in enumerate(shifted)})
    return table


BYTES = _byte_table()


def _ends_mid_character(piece: str) -> bool:
    """Whether a byte-level piece's bytes stop inside a UTF-8 character (``Ã`` alone is the first half
    of ``é``; ``Ã©`` is whole). Bytes that are not UTF-8 at all (a model's stray continuation byte) do
    not wait for more; nor does a piece holding a character outside the table."""
    if any(c not in BYTES for c in piece):
        return False
    try:
        bytes(BYTES[c] for c in piece).decode("utf-8")
    except UnicodeDecodeError as e:
        return e.reason == "unexpected end of data"
    return False


def byte_text(piece: str) -> str:
    """The text a byte-level piece writes (``Ã©`` -> ``é``); half a character reads as ``\ufffd``."""
    return bytes(BYTES.get(c, ord("?")) for c in piece).decode("utf-8", errors="replace")


def _units(pieces: list[str], marker: str | None) -> list[list[int]]:
    """The pieces as units of text: one piece each, but under byte-level BPE the pieces that together
    write one character (``â ĺ ķ`` is ``☕``) join into one unit, so no unit is half a character."""
    units: list[list[int]] = []
    for k, piece in enumerate(pieces):
        joining = marker == "Ġ" and units and not piece.startswith(marker)
        if joining and _ends_mid_character("".join(pieces[i] for i in units[-1])):
            units[-1].append(k)
        else:
            units.append([k])
    return units


def _marked(pieces: list[str], marker: str | None, text_of: Callable[[str], str]) -> list[tuple[str, bool, bool]]:
    """For each piece: its text without the marker, whether it starts a word, whether it ends one (None: unknown)."""
    out = []
    for p in pieces:
        kind = MARKERS.get(marker or "")
        if kind == "start":
            text = text_of(p.removeprefix(marker)) if marker == "Ġ" else p.removeprefix(marker)
            out.append((text, p.startswith(marker), False))
        elif kind == "continue":
            out.append((p.removeprefix(marker), not p.startswith(marker), False))
        elif kind == "end":
            out.append((p.removesuffix(marker), False, p.endswith(marker)))
        else:
            out.append((p, True, True))
    return out


def group_pieces(
    pieces: list[str],
    special: list[bool],
    marker: str | None,
    side: str,
    text_of: Callable[[str], str] = byte_text,
    eos: int | None = -1,
) -> Grouping:
    """The attnviz tokens of one side's tokenizer ``pieces`` (``special[i]``: piece ``i`` is a special
    token). ``side`` is ``"source"`` (specials gathered into a final ``<eos>``) or ``"target"`` (specials
    left out but the one at position ``eos``, the target's ``</s>``, which becomes ``<eos>``; ``None``: the
    target has none, -1: the last piece if it is special). ``text_of`` decodes a byte-level piece."""
    body = [i for i, s in enumerate(special) if not s]
    units = [[body[k] for k in unit] for unit in _units([pieces[i] for i in body], marker)]
    marks = _marked(["".join(pieces[i] for i in unit) for unit in units], marker, text_of)
    texts: list[str] = []
    groups: list[list[int]] = []
    starts: list[bool] = []
    ends: list[bool] = []
    pending: list[int] = []  # a bare word-start marker waiting for its piece
    markers: set[int] = set()
    for unit, (text, start, end) in zip(units, marks, strict=True):
        if not text and start and not end and len(unit) == 1:
            pending.append(unit[0])
            continue
        texts.append(text or "".join(pieces[i] for i in unit))
        groups.append([*pending, *unit])
        markers.update(pending)
        starts.append(start or bool(pending) or not groups[:-1])
        ends.append(end)
        pending = []
    if pending:  # a marker with no piece after it: a token of its own
        texts.append(pieces[pending[0]])
        groups.append(pending)
        starts.append(True)
        ends.append(True)
    tokens = []
    for k, text in enumerate(texts):
        last = k == len(texts) - 1
        continues = not last and not ends[k] and not starts[k + 1]
        tokens.append(text + MARK if continues and not text.endswith(MARK) else text)
    rest = [i for i, s in enumerate(special) if s]
    if side == "source" and rest:
        tokens.append(EOS)
        groups.append(rest)
    elif side == "target" and eos is not None and special and special[eos]:
        tokens.append(EOS)
        groups.append([eos % len(special)])
    return Grouping(tokens, groups, frozenset(markers))
