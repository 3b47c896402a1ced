"""Which encoding a text file's bytes are in, read from its byte-order mark.

Text files are UTF-8. A file that starts with a UTF-16 or UTF-32 byte-order mark is read in that
encoding: Windows writes those (Notepad's "Unicode", Excel's "Unicode Text", Windows PowerShell's
``>``), and the mark says so unambiguously. Without a mark a file is UTF-8.
"""

from __future__ import annotations

import codecs

WIDE_MARKS = (  # the UTF-32 marks first: UTF-32LE's starts with UTF-16LE's
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def bom_encoding(head: bytes) -> str:
    """The codec for bytes that start with ``head``: ``utf-32`` or ``utf-16`` after their mark (the
    codec reads the mark and drops it), else ``utf-8-sig`` (UTF-8, a leading mark dropped)."""
    for mark, encoding in WIDE_MARKS:
        if head.startswith(mark):
            return encoding
    return "utf-8-sig"


def decode_text(data: bytes) -> str:
    """A text file's bytes as text: UTF-16 or UTF-32 after their mark (dropped), else UTF-8 as it is
    (a leading UTF-8 mark is kept as U+FEFF, as ``datasets``' text builder reads it; the readers of
    sentence and gold files drop it). Raises UnicodeDecodeError for bytes that are not in the
    encoding."""
    encoding = bom_encoding(data[:4])
    return data.decode("utf-8" if encoding == "utf-8-sig" else encoding)


def as_utf8(data: bytes) -> bytes:
    """A UTF-16 or UTF-32 file (with its mark) as UTF-8 bytes; any other bytes as they are (bytes
    that do not decode are left for the reader to refuse, naming the line)."""
    encoding = bom_encoding(data[:4])
    if encoding == "utf-8-sig":
        return data
    try:
        return data.decode(encoding).encode("utf-8")
    except UnicodeDecodeError:
        return data


def looks_binary(head: bytes) -> str | None:
    """Why bytes that start with ``head`` are no UTF-8 text of sentences, or None: NUL bytes
    without a UTF-16 or UTF-32 mark, on every other byte (UTF-16 without its mark) or anywhere
    (a binary file). The message says how to make the file text."""
    if bom_encoding(head[:4]) != "utf-8-sig" or b"\x00" not in head:
        return None
    pairs = head[: len(head) // 2 * 2]
    halves = {"LE": (pairs[1::2], pairs[0::2]), "BE": (pairs[0::2], pairs[1::2])}  # ASCII in UTF-16LE: "a\0"
    for order, (nuls, chars) in halves.items():
        # UTF-16: NULs on one side of most pairs and almost never on the other (a program or an array
        # file has NULs on both)
        if pairs and nuls.count(0) > len(nuls) // 2 and chars.count(0) <= len(chars) // 20:
            return (
                "looks like UTF-16 without a byte-order mark; re-save it as UTF-8 "
                f"(`iconv -f UTF-16{order} -t UTF-8 in > out`)"
            )
    return "looks like a binary file, not text; give one sentence a line, UTF-8"
