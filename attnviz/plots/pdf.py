"""A PDF's document title: kaleido prints every figure from its own page, titled ``Kaleido-fier``."""

from __future__ import annotations

import re


def _pdf_text(text: str) -> bytes:
    """A PDF text string in UTF-16BE hex (any character, no escaping)."""
    return b"<FEFF" + text.encode("utf-16-be").hex().upper().encode() + b">"


def pdf_titled(pdf: bytes, title: str) -> bytes:
    """``pdf`` with ``title`` as its document title, by an incremental update (a new document
    information dictionary, xref section and trailer appended; the original bytes stay). A PDF
    without a classic trailer (a cross-reference stream) comes back unchanged."""
    trailers = list(re.finditer(rb"trailer\s*<<(.*?)>>\s*startxref\s*(\d+)", pdf, re.S))
    if not trailers:
        return pdf
    trailer, previous = trailers[-1].group(1), int(trailers[-1].group(2))
    size, root = re.search(rb"/Size\s+(\d+)", trailer), re.search(rb"/Root\s+(\d+\s+\d+\s+R)", trailer)
    if size is None or root is None:
        return pdf
    number = int(size.group(1))  # the new information dictionary's object number
    info = {b"Title": _pdf_text(title), b"Creator": _pdf_text("attnviz"), b"Producer": _pdf_text("kaleido (Chromium)")}
    body = b"".join(b"/" + key + b" " + value for key, value in info.items())
    start = len(pdf) + 1  # after the newline below
    update = b"\n%d 0 obj\n<<%s>>\nendobj\n" % (number, body)
    xref = start + len(update) - 1
    update += b"xref\n0 1\n0000000000 65535 f \n%d 1\n%010d 00000 n \n" % (number, start)
    trailer = b"trailer\n<</Size %d /Root %s /Info %d 0 R /Prev %d>>\n" % (number + 1, root.group(1), number, previous)
    update += trailer + b"startxref\n%d\n%%%%EOF\n" % xref
    return pdf + update
