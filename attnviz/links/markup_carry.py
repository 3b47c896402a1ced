"""Carrying a source's markup into its translation along word links, as translation products move tags.

Pure functions: a :class:`~attnviz.links.markup.Markup`, the source and target words, ``(source, target)``
word links and the translation's text in; a :class:`MarkupResult` out. Words are whole words (subword
pieces joined), so an element never starts or ends inside a word. The rules, in order:

1. **Source words.** An element covers every source word that shares a character with its text; a tag
   that starts or ends inside a word (``wo<b>rd</b>``) widens to the whole word (flag ``widened``).
   An element with no text (``<br/>``, a placeholder, ``<b></b>``) sits between two words.
2. **Target words.** An element covers the target words linked to its source words. Linked words that
   are not contiguous are flagged ``split`` and resolved by the split rule: ``hull`` (the default) covers
   from the first to the last linked word, ``block`` only the largest contiguous run (the first of equals).
3. **No linked word.** An element with no text, or whose words have no link (flag ``unaligned``, carried
   as an empty element), is placed next to the nearest source word that has links, the following one
   first: before that word's first target word, or after a preceding word's last one. With no link at
   all, at the same relative position in the translation.
4. **Well-nested.** Elements are placed parent first, in source order. An element must stay inside its
   source parent: what falls outside the parent's target words is cut off (nothing left: an empty element
   at the parent's nearest edge). An element that overlaps an element placed before it without one
   holding the other is cut to the part outside that element. Both are flagged ``crossing``.

The marked-up translation is the translation's text (its words as it writes them) with the tags written as
in the source around the words, text escaped (``&``, ``<``, ``>`` and ``{`` as entities) so that it reads
back with its elements alone; closing tags follow the word they close, the space between two words comes
next, then empty elements and opening tags (an element with no words at the end of the element around it
comes before the space). A placeholder is written as a word: a space before it where the source had one
or the translation spaces its two neighbours, and after it where the translation spaces them (at the
translation's start, where the source had one); a space goes before the opening tags around it.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise

from attnviz.data import Link
from attnviz.errors import DataError, InputError
from attnviz.links.markup import Element, Markup

SPLIT_RULES = ("hull", "block")
FLAGS = ("widened", "split", "unaligned", "crossing")
Range = tuple[int, int]  # [start, end) over words; start == end: between words start - 1 and start


@dataclass(frozen=True)
class Span:
    """Where one element went: its source and target word ranges, the target words its source words link
    to, and the flags of the rules that applied (:data:`FLAGS`)."""

    element: Element
    source_words: Range
    target_words: Range
    linked: tuple[int, ...]
    flags: tuple[str, ...]

    def to_dict(self) -> dict:
        el = self.element
        return {
            "element": el.label,
            "kind": el.kind,
            "name": el.name,
            "attributes": el.attributes,
            "source_words": list(self.source_words),
            "target_words": list(self.target_words),
            "linked": list(self.linked),
            "flags": list(self.flags),
        }


@dataclass
class MarkupResult:
    """A marked-up source carried into its translation."""

    source: str  # the marked-up source, as given
    plain_source: str  # the text the model read
    translation: str
    marked_translation: str
    source_words: list[str]
    target_words: list[str]
    links: list[Link]  # sorted (source word, target word)
    spans: list[Span]  # one per element, in source order
    method: str
    split: str

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "plain_source": self.plain_source,
            "translation": self.translation,
            "marked_translation": self.marked_translation,
            "source_words": self.source_words,
            "target_words": self.target_words,
            "links": [list(link) for link in self.links],
            "spans": [s.to_dict() for s in self.spans],
            "method": self.method,
            "split": self.split,
        }


def _folded(text: str) -> tuple[str, list[int], list[int]]:
    """``text`` case-folded a character at a time (case folding, unlike ``lower``, reads no context: a
    final ``Σ`` folds as any other), for each character of the result the index of the character of
    ``text`` it came from (folding may lengthen one: ``İ``, ``ß``), and for each character of ``text``,
    and its end, where it begins in the result."""
    folded, where, starts = [], [], []
    for p, c in enumerate(text):
        starts.append(len(where))
        f = c.casefold()
        folded.append(f)
        where += [p] * len(f)
    starts.append(len(where))
    return "".join(folded), where, starts


def locate(words: list[str], text: str, side: str = "source") -> list[Range]:
    """Each word's ``[start, end)`` character offsets in ``text``, found left to right: the first place the
    word is, as written or with its case changed (a tokenizer may show a lowercased form)."""
    folded, where, starts = _folded(text)
    offsets, pos = [], 0
    for word in words:
        at = text.find(word, pos)
        found = (at, at + len(word)) if at >= 0 else None
        key = word.casefold()
        loose = folded.find(key, starts[pos]) if key else -1
        if loose >= 0 and (found is None or where[loose] < found[0]):
            found = (where[loose], where[loose + len(key) - 1] + 1)
        if found is None:
            raise DataError(
                f"the model's {side} word {word[:40]!r} is not in the {side} text as written; the model's "
                "tokenizer changes the text (normalises it), so its words cannot carry markup"
            )
        offsets.append(found)
        pos = found[1]
    return offsets


def source_range(el: Element, offsets: list[Range]) -> tuple[Range, bool]:
    """The source words an element covers (rule 1) and whether it widened to whole words."""
    inside = [k for k, (start, end) in enumerate(offsets) if start < el.end and el.start < end]
    if not inside or el.start == el.end:
        before = sum(end <= el.start for _, end in offsets)
        return (before, before), False
    first, last = inside[0], inside[-1]
    return (first, last + 1), offsets[first][0] < el.start or offsets[last][1] > el.end


def target_range(linked: list[int], split: str) -> tuple[Range, bool]:
    """The target words of an element whose source words link to ``linked`` (sorted, not empty) under the
    split rule (rule 2), and whether they were split."""
    if linked[-1] - linked[0] + 1 == len(linked):
        return (linked[0], linked[-1] + 1), False
    if split == "hull":
        return (linked[0], linked[-1] + 1), True
    runs, start = [], linked[0]
    for previous, word in pairwise(linked):
        if word != previous + 1:
            runs.append((start, previous + 1))
            start = word
    runs.append((start, linked[-1] + 1))
    return max(runs, key=lambda r: r[1] - r[0]), True  # max keeps the first of equals


def anchor(source: Range, targets: list[list[int]], n_target: int) -> int:
    """Where an element with no linked word goes (rule 3): a target word boundary."""
    start, end = source
    n_source = len(targets)
    for distance in range(n_source + 1):
        after, before = end + distance, start - 1 - distance
        if after < n_source and targets[after]:
            return targets[after][0]
        if before >= 0 and targets[before]:
            return targets[before][-1] + 1
    return round(start / max(n_source, 1) * n_target)


def _crosses(a: Range, b: Range) -> bool:
    """Two ranges of words that overlap without one holding the other."""
    overlap = a[0] < b[1] and b[0] < a[1]
    return overlap and not (b[0] <= a[0] and a[1] <= b[1]) and not (a[0] <= b[0] and b[1] <= a[1])


def _inside(r: Range, parent: Range) -> Range:
    """``r`` cut to ``parent`` (rule 4); an empty range at ``parent``'s nearest edge when nothing is left."""
    start, end = max(r[0], parent[0]), min(r[1], parent[1])
    if start < end or (r[0] == r[1] and start == end):
        return start, end
    edge = parent[0] if r[1] <= parent[0] else parent[1]
    return edge, edge


def place(markup: Markup, ranges: list[Range]) -> tuple[list[Range], list[bool]]:
    """Rule 4 over the elements' target ranges (in source order): the ranges made well-nested, and for
    each whether it was cut."""
    placed: list[Range] = []
    cut = []
    for k, el in enumerate(markup.elements):
        r, moved = ranges[k], False
        if el.parent is not None:
            parent = placed[el.parent]
            if not (parent[0] <= r[0] and r[1] <= parent[1]):
                r, moved = _inside(r, parent), True
        ancestors = markup.ancestors(k)
        crossed = next((q for j, q in enumerate(placed) if j not in ancestors and _crosses(r, q)), None)
        while crossed is not None:
            r, moved = ((r[0], crossed[0]) if r[0] < crossed[0] else (crossed[1], r[1])), True
            crossed = next((q for j, q in enumerate(placed) if j not in ancestors and _crosses(r, q)), None)
        placed.append(r)
        cut.append(moved)
    return placed, cut


def _contains(markup: Markup, ranges: list[Range], p: int, k: int) -> bool:
    """Whether element ``p`` holds element ``k`` in the output (ranges already well-nested)."""
    (ps, pe), (ks, ke) = ranges[p], ranges[k]
    if markup.elements[p].kind != "tag" or p == k:
        return False
    if ks == ke:  # an element with no words on p's edge is inside p only if it was inside it in the source
        return ps < ks < pe or (ps <= ks <= pe and p in markup.ancestors(k))
    return ps < pe and ps <= ks and ke <= pe and ((ps, pe) != (ks, ke) or p < k)


def _events(markup: Markup, ranges: list[Range], n_target: int) -> list[tuple[str, int, bool]]:
    """The output in order: ``("word", j)``, a tag's ``("open", k)`` and ``("close", k)`` (an empty tag's too),
    a void element's or placeholder's ``("empty", k)``; each with whether it sits at the end of the element
    around it (so it follows the last word before the space)."""
    children: dict[int | None, list[int]] = {}
    for k in range(len(ranges)):
        holders = [p for p in range(len(ranges)) if _contains(markup, ranges, p, k)]
        parent = min(holders, key=lambda p: (ranges[p][1] - ranges[p][0], -p), default=None)
        children.setdefault(parent, []).append(k)
    out: list[tuple[str, int, bool]] = []

    def walk(parent: int | None, lo: int, hi: int) -> None:
        at = lo
        for k in sorted(children.get(parent, []), key=lambda k: (*ranges[k], k)):
            start, end = ranges[k]
            out.extend(("word", j, False) for j in range(at, start))
            tail = parent is not None and start == end == hi
            if markup.elements[k].kind != "tag":
                out.append(("empty", k, tail))
            else:
                out.append(("open", k, tail))
                walk(k, start, end)
                out.append(("close", k, True))
            at = max(at, end)
        out.extend(("word", j, False) for j in range(at, hi))

    walk(None, 0, n_target)
    return out


def _text(piece: str) -> str:
    """Text of the translation as markup writes text: ``&``, ``<``, ``>`` and ``{`` as entities, so that the
    output reads back with its elements alone (a ``{name}`` the translation holds is not a placeholder)."""
    return html.escape(piece, quote=False).replace("{", "&#123;")


def render(markup: Markup, ranges: list[Range], target_words: list[str], translation: str) -> str:
    """The translation with the elements written in at their target ranges (see the module's rules)."""
    offsets = locate(target_words, translation, "target")
    edges = [0, *(end for _, end in offsets)]
    gaps = [translation[edges[j] : offsets[j][0]] for j in range(len(offsets))] + [translation[edges[-1] :]]
    out: list[str] = []
    openings = 0  # opening tags written since the last text or closing tag: a space goes before them
    spaced = True  # the text written so far (tags aside) ends in whitespace, or there is none yet
    pending = False  # a placeholder asks for a space before the next text
    gap_due = 0  # the gap before word gap_due is still to be written

    def text(piece: str) -> None:
        nonlocal openings, spaced
        if piece:
            out.append(piece)
            openings, spaced = 0, piece[-1].isspace()

    def space() -> None:  # a space here, before any opening tags just written: "{x} <b>word"
        nonlocal spaced, pending
        if not spaced:
            out.insert(len(out) - openings, " ")
            spaced = True
        pending = False

    def flush_gap(upto: int) -> None:
        nonlocal gap_due
        while gap_due <= upto:
            if gap_due < len(gaps):
                text(_text(gaps[gap_due]))
            gap_due += 1

    position = 0  # the word boundary the next event sits at
    for kind, k, tail in _events(markup, ranges, len(target_words)):
        el = markup.elements[k] if kind != "word" else None
        if kind == "close":
            out.append(el.closing)
            openings = 0
            continue
        if not tail:
            flush_gap(position)
        if kind == "word":
            if pending:
                space()
            start, end = offsets[k]
            text(_text(translation[start:end]))  # the word as the translation writes it
            position = k + 1
        elif kind == "open":
            out.append(el.opening)
            openings += 1
        elif el.kind == "placeholder":  # written as a word between its neighbours
            at = ranges[k][0]
            inner = 0 < at < len(target_words)
            apart = inner and any(c.isspace() for c in gaps[at])  # the translation spaces these two words
            if pending or el.space_before or apart:
                space()
            text(el.opening)
            pending = apart if inner else el.space_after
        else:  # a void element
            if pending:
                space()
            out.append(el.opening)
            openings = 0
    flush_gap(len(gaps) - 1)
    return "".join(out).strip()


def carry_markup(
    markup: Markup,
    source_words: list[str],
    target_words: list[str],
    links: Iterable[Link],
    translation: str | None = None,
    split: str = "hull",
    method: str = "",
) -> MarkupResult:
    """Carry ``markup``'s elements into the translation along ``links`` (``(source, target)`` word
    indices) by the module's rules. ``source_words`` are the words of ``markup.plain`` in order and
    ``target_words`` those of ``translation`` (joined by spaces when it is None or does not hold them as
    written); ``method`` names where
    the links came from."""
    if split not in SPLIT_RULES:
        raise InputError(f"unknown split rule {split!r}; choose one of {', '.join(SPLIT_RULES)}")
    if not target_words:
        raise InputError("the translation is empty, so there is nothing to carry the markup into; give a translation")
    links = sorted(set(links))
    bad = [(i, j) for i, j in links if not (0 <= i < len(source_words) and 0 <= j < len(target_words))]
    if bad:
        raise InputError(
            f"links {bad[:5]} fall outside {len(source_words)} source x {len(target_words)} target "
            "words; links are (source, target) word indices"
        )
    try:
        locate(target_words, translation or "", "target")
    except DataError:  # a text the words cannot be found in: write them joined by spaces
        translation = " ".join(target_words)
    offsets = locate(source_words, markup.plain)
    targets: list[list[int]] = [[] for _ in source_words]
    for i, j in links:
        targets[i].append(j)
    ranges, flags, linked_of = [], [], []
    for el in markup.elements:
        (start, end), widened = source_range(el, offsets)
        linked = sorted({j for i in range(start, end) for j in targets[i]})
        own = ["widened"] if widened else []
        if linked:
            r, was_split = target_range(linked, split)
            own += ["split"] if was_split else []
        else:
            own += ["unaligned"] if start < end else []
            at = anchor((start, end), targets, len(target_words))
            r = (at, at)
        ranges.append(r)
        flags.append(own)
        linked_of.append(((start, end), tuple(linked)))
    placed, cut = place(markup, ranges)
    spans = [
        Span(el, src, placed[k], linked, (*flags[k], *(["crossing"] if cut[k] else [])))
        for k, (el, (src, linked)) in enumerate(zip(markup.elements, linked_of, strict=True))
    ]
    marked = render(markup, placed, target_words, translation)
    return MarkupResult(
        markup.source,
        markup.plain,
        translation,
        marked,
        list(source_words),
        list(target_words),
        links,
        spans,
        method,
        split,
    )
