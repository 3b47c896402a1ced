"""Reading a PDF's document title the way a reader does, for the tests of PDF files."""

from __future__ import annotations

import re


def document_title(pdf: bytes) -> str:
    """The title a reader finds: the last trailer's /Info, located through the xref sections."""
    trailer = re.findall(rb"trailer\s*<<(.*?)>>", pdf, re.S)[-1]
    number = int(re.search(rb"/Info\s+(\d+)\s+0\s+R", trailer).group(1))
    start = int(re.findall(rb"startxref\s*(\d+)", pdf)[-1])
    assert pdf[start : start + 4] == b"xref"  # startxref points at the last xref section
    offset = None
    for first, count, rows in re.findall(rb"(\d+) (\d+)\n((?:\d{10} \d{5} [nf] \n)+)", pdf[start:]):
        entries = rows.splitlines()
        if int(first) <= number < int(first) + int(count):
            offset = int(entries[number - int(first)][:10])
            break
    assert offset is not None and pdf[offset:].startswith(b"%d 0 obj" % number)
    body = pdf[offset : pdf.index(b"endobj", offset)]
    hexed = re.search(rb"/Title\s*<FEFF([0-9A-F]*)>", body)
    if hexed:
        return bytes.fromhex(hexed.group(1).decode()).decode("utf-16-be")
    return re.search(rb"/Title\s*\((.*?)\)", body).group(1).decode()
