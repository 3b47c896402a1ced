"""A PDF's document title is the figure's, added as an incremental update
that a reader follows from the last trailer."""

from __future__ import annotations

import re

from attnviz.plots.pdf import pdf_titled
from tests.support.pdf import document_title

MINIMAL = (  # a one-page PDF as Chromium's Skia writes them: classic xref, /Info 1 0 R
    b"%PDF-1.4\n1 0 obj\n<</Title (Kaleido-fier) /Producer (Skia/PDF)>>\nendobj\n"
    b"2 0 obj\n<</Type /Catalog /Pages 3 0 R>>\nendobj\n3 0 obj\n<</Type /Pages /Kids [] /Count 0>>\nendobj\n"
)


def minimal_pdf() -> bytes:
    offsets = [m.start() for m in re.finditer(rb"\d+ 0 obj", MINIMAL)]
    xref = b"xref\n0 4\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    trailer = b"trailer\n<</Size 4\n/Root 2 0 R\n/Info 1 0 R>>\nstartxref\n%d\n%%%%EOF\n" % len(MINIMAL)
    return MINIMAL + xref + trailer


def test_a_pdf_gets_the_figure_title_and_keeps_its_bytes():
    pdf = minimal_pdf()
    assert document_title(pdf) == "Kaleido-fier"
    titled = pdf_titled(pdf, "“Ein Mann mit einem roten Hut.” · 5 models")
    assert titled.startswith(pdf)  # an incremental update: the original stays as it was
    assert document_title(titled) == "“Ein Mann mit einem roten Hut.” · 5 models"
    assert b"/Prev %d" % len(MINIMAL) in titled  # the reader finds the older objects through /Prev


def test_a_pdf_without_a_classic_trailer_comes_back_unchanged():
    stream_xref = b"%PDF-1.7\n1 0 obj\n<</Type /XRef>>\nstream\nendstream\nendobj\nstartxref\n9\n%%EOF\n"
    assert pdf_titled(stream_xref, "x") == stream_xref
