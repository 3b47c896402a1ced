"""Inline markup in a source sentence: parsed into the plain text a model translates and the elements to
carry into the translation (:mod:`attnviz.links.markup_carry`).

What is read, and the rule for each kind of input:

* **tags** ``<b>..</b>``, ``<i>``, ``<a href="..">`` and the other names of :data:`INLINE`: an element
  over the text between its opening and closing tag. Names are case-insensitive; the opening tag is
  kept verbatim (its attributes as written, quotes and a ``>`` inside quotes included) and so is the
  closing tag. Any other name (``<script>``, ``<div>``, ``<img>``) is a :class:`DataError`.
* **void** ``<br>``, ``<br/>`` (:data:`VOID`): an element of no text, anchored between two words; ``<br>``
  separates words in the text the model reads (``one<br/>two`` is read as ``one two``), ``<wbr>`` (a
  break opportunity inside a word) does not.
* **placeholders** ``{name}`` (an ASCII letter or ``_``, then ASCII letters, digits or ``_``; ``{0}`` and
  ``{año}`` are text): never given to the model
  (the shipped models read an unknown word as ``<unk>`` or as letters and translate it into some other
  word, or drop it); carried verbatim as an anchored element like ``<br/>``, and in the text the model
  reads they separate words. Whether a placeholder has a space before and after it is read from the
  text around it, tags aside (``<b>{x}</b> cat``: a space after it).
* **entities** ``&amp;``, ``&lt;``, ``&#233;`` in the text are decoded (``html.unescape``) for the model.
* a ``<`` followed by a letter, ``/``, ``!`` or ``?`` starts a tag; one that does not parse (unclosed
  quote, no ``>``), a comment or a declaration is a :class:`DataError`. Any other ``<``, a lone ``>``,
  braces around anything but a name and doubled braces (``{{name}}``) are text.
* unbalanced tags (a closing tag that does not close the innermost open one, an element left open) and
  ``<b/>`` (an empty non-void element) are a :class:`DataError`, as are more than :data:`MAX_ELEMENTS`
  elements, nesting deeper than :data:`MAX_DEPTH`, more than :data:`MAX_MARKUP_CHARS` characters and a
  text with no words outside the markup.

The plain text has each run of whitespace written as one space, without leading or trailing space.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass

from attnviz.errors import DataError

INLINE = (
    "a",
    "abbr",
    "b",
    "cite",
    "code",
    "em",
    "i",
    "kbd",
    "mark",
    "q",
    "s",
    "small",
    "span",
    "strong",
    "sub",
    "sup",
    "u",
    "var",
)
VOID = ("br", "wbr")
KINDS = ("tag", "void", "placeholder")
MAX_MARKUP_CHARS = 5000
MAX_ELEMENTS = 100
MAX_DEPTH = 16
_ATTRIBUTE = r"""\s+[^\s"'<>/=]+(?>\s*=\s*(?>"[^"]*"|'[^']*'|[^\s"'=<>`]+))?"""
_TAG = re.compile(rf"<(/?)([A-Za-z][A-Za-z0-9]*)((?>{_ATTRIBUTE})*+)\s*+(/?)>")
_SPECIAL = re.compile(r"<[A-Za-z/!?]|(?<!\{)\{[A-Za-z_][A-Za-z0-9_]*\}(?!\})")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Element:
    """One piece of markup: its kind (:data:`KINDS`), where it sits in the plain text, and how it is written."""

    kind: str
    name: str  # the tag name, lowercased; the placeholder's name
    attributes: str  # the opening tag's attributes as written (" href='x'"), "" if none
    opening: str  # the opening tag, void element or placeholder exactly as written
    closing: str  # the closing tag as written; "" for a void element or a placeholder
    start: int  # character offsets in Markup.plain: [start, end); start == end for no text
    end: int
    parent: int | None  # the index of the innermost element around it in the source
    space_before: bool = False  # a placeholder: whitespace (or the text's start) right before it
    space_after: bool = False  # ... and right after it (or the text's end)

    @property
    def label(self) -> str:
        """``<b>``, ``<br/>`` or ``{name}``: how a table names the element."""
        if self.kind == "placeholder":
            return self.opening
        return f"<{self.name}/>" if self.kind == "void" else f"<{self.name}>"


@dataclass(frozen=True)
class Markup:
    """A marked-up source: as given, the plain text the model reads, and the elements in source order
    (an element's opening before anything inside it: a parent comes before its children)."""

    source: str
    plain: str
    elements: tuple[Element, ...]

    def ancestors(self, k: int) -> set[int]:
        """The elements around element ``k`` in the source."""
        found, parent = set(), self.elements[k].parent
        while parent is not None:
            found.add(parent)
            parent = self.elements[parent].parent
        return found


class _Builder:
    """The plain text and the elements, built while scanning."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.plain: list[str] = []
        self.size = 0
        self.elements: list[dict] = []
        self.open: list[int] = []  # indices of the elements open at this point, outermost first
        self.boundaries: set[int] = set()  # offsets of the spaces a placeholder or <br> puts between words

    def text(self, chunk: str) -> None:
        chunk = unicodedata.normalize("NFC", html.unescape(chunk))
        chunk = "".join(" " if unicodedata.category(c) in ("Cc", "Cs") else c for c in chunk)  # as the tokenizer
        self.plain.append(chunk)
        self.size += len(chunk)

    def boundary(self) -> None:
        """A space between words that the source does not have (a placeholder's, a ``<br>``'s)."""
        self.boundaries.add(self.size)
        self.text(" ")

    def add(self, **fields) -> int:
        if len(self.elements) >= MAX_ELEMENTS:
            raise DataError(
                f"the text holds more than {MAX_ELEMENTS} elements of markup; carry at most "
                f"{MAX_ELEMENTS} at a time (split the text into sentences)"
            )
        parent = self.open[-1] if self.open else None
        self.elements.append({"start": self.size, "end": self.size, "parent": parent, **fields})
        return len(self.elements) - 1


def _where(source: str, at: int) -> str:
    return f"character {at + 1} ({source[at : at + 30]!r})"


def _tag(b: _Builder, match: re.Match, at: int) -> None:
    closing, name, attributes, slash = match.group(1), match.group(2).lower(), match.group(3), match.group(4)
    written = match.group(0)
    if name not in INLINE + VOID:
        raise DataError(
            f"<{name}> at {_where(b.source, at)} is not inline markup that can be carried; use "
            f"{', '.join(INLINE + VOID)}, or remove it"
        )
    if closing:
        if name in VOID:
            raise DataError(f"{written!r} at {_where(b.source, at)}: <{name}> has no closing tag; write <{name}/>")
        if attributes or slash:
            raise DataError(f"{written!r} at {_where(b.source, at)} is not a closing tag; write </{name}>")
        if not b.open:
            raise DataError(f"{written!r} at {_where(b.source, at)} closes an element that was never opened; remove it")
        inner = b.elements[b.open[-1]]
        if inner["name"] != name:
            raise DataError(
                f"{written!r} at {_where(b.source, at)} does not close <{inner['name']}>, the innermost "
                f"open element (tags must nest); close </{inner['name']}> first"
            )
        inner.update(end=b.size, closing=written)
        b.open.pop()
        return
    if name in VOID:
        b.add(kind="void", name=name, attributes=attributes, opening=written, closing="")
        if name == "br":
            b.boundary()  # "one<br/>two" is read as "one two" (a <wbr> stays inside its word)
        return
    if slash:
        raise DataError(
            f"{written!r} at {_where(b.source, at)} is an empty <{name}>; write <{name}></{name}> "
            "around some text, or remove it"
        )
    if len(b.open) >= MAX_DEPTH:
        raise DataError(f"the markup nests more than {MAX_DEPTH} elements deep at {_where(b.source, at)}; flatten it")
    b.open.append(b.add(kind="tag", name=name, attributes=attributes, opening=written, closing=""))


def _placeholder(b: _Builder, written: str) -> None:
    b.add(kind="placeholder", name=written[1:-1], attributes="", opening=written, closing="")
    b.boundary()  # "a{x}b" is read as "a b"


def _spacing(b: _Builder) -> None:
    """Each placeholder's ``space_before`` and ``space_after``: whether the source has whitespace, or its start
    or end, right beside it, tags aside (a ``<br>`` or another placeholder there: no space)."""
    text = "".join(b.plain)  # before its spaces are collapsed

    def space(at: int) -> bool:
        return text[at].isspace() and at not in b.boundaries

    for el in b.elements:
        if el["kind"] == "placeholder":
            at = el["start"]  # its own space is text[at]
            el["space_before"] = at == 0 or space(at - 1)
            el["space_after"] = at + 1 >= len(text) or space(at + 1)


def _collapse(text: str, elements: list[dict]) -> str:
    """``text`` with each whitespace run one space and no space at either end; the elements' offsets moved."""
    new = [0] * (len(text) + 1)  # old offset -> new offset
    out: list[str] = []
    size = 0
    pos = 0
    for m in _SPACE.finditer(text):
        for k in range(pos, m.start()):
            new[k] = size
            out.append(text[k])
            size += 1
        keep = m.start() > 0 and m.end() < len(text)
        for k in range(m.start(), m.end()):
            new[k] = size
        if keep:
            out.append(" ")
            size += 1
        pos = m.end()
    for k in range(pos, len(text)):
        new[k] = size
        out.append(text[k])
        size += 1
    new[len(text)] = size
    for el in elements:
        el["start"], el["end"] = new[el["start"]], new[el["end"]]
    return "".join(out)


def parse_markup(text: str) -> Markup:
    """``text`` with inline markup as :class:`Markup`: the plain text and the elements, by the rules of
    this module; anything else is a :class:`DataError` that says what to change."""
    if not isinstance(text, str):
        raise DataError(f"the marked-up text must be a string, got {type(text).__name__}")
    if len(text) > MAX_MARKUP_CHARS:
        raise DataError(
            f"the marked-up text is {len(text):,} characters long; the limit is {MAX_MARKUP_CHARS:,}. "
            "Give one sentence at a time."
        )
    if not text.strip():
        raise DataError('the text is empty; type a sentence with markup, e.g. "the <b>black</b> cat"')
    b = _Builder(text)
    pos = 0
    for m in _SPECIAL.finditer(text):
        if m.start() < pos:  # inside a tag already read
            continue
        b.text(text[pos : m.start()])
        if m.group(0)[0] == "{":
            _placeholder(b, m.group(0))
            pos = m.end()
            continue
        if text[m.start() + 1] in "!?":
            raise DataError(f"comments and declarations are not carried ({_where(text, m.start())}); remove them")
        tag = _TAG.match(text, m.start())
        if tag is None:
            raise DataError(
                f"{_where(text, m.start())} starts a tag that does not parse (no closing > or an "
                "unclosed quote); finish the tag, or write &lt; for a literal <"
            )
        _tag(b, tag, m.start())
        pos = tag.end()
    b.text(text[pos:])
    if b.open:
        el = b.elements[b.open[-1]]
        raise DataError(f"{el['opening']!r} is never closed; add </{el['name']}> where it ends")
    _spacing(b)
    plain = _collapse("".join(b.plain), b.elements)
    if not plain:
        raise DataError("the text has no words outside the markup; add the text to translate")
    return Markup(text, plain, tuple(Element(**el) for el in b.elements))
