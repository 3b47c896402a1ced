"""Text files in UTF-16 or UTF-32 after their byte-order mark (what Windows' Notepad, Excel's
"Unicode Text" and Windows PowerShell's ``>`` write) are read as text; everything else as UTF-8."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from attnviz.data import as_utf8, bom_encoding, looks_binary, text_lines

TEXT = "the café .\r\nle café ☕ 𝄞\n"


@pytest.mark.parametrize(
    ("encoding", "mark"),
    [
        ("utf-16-le", codecs.BOM_UTF16_LE),
        ("utf-16-be", codecs.BOM_UTF16_BE),
        ("utf-32-le", codecs.BOM_UTF32_LE),
        ("utf-32-be", codecs.BOM_UTF32_BE),
        ("utf-8", codecs.BOM_UTF8),
        ("utf-8", b""),
    ],
)
def test_a_file_is_read_in_the_encoding_its_mark_names(encoding, mark):
    data = mark + TEXT.encode(encoding)
    first = "\ufeff" if mark == codecs.BOM_UTF8 else ""  # kept, as datasets' text builder keeps it
    assert text_lines(data) == [first + "the café .", "le café ☕ 𝄞"]
    assert as_utf8(data) == (data if encoding == "utf-8" else TEXT.encode())


def test_utf32_le_is_not_taken_for_utf16_le_whose_mark_begins_it():
    assert bom_encoding(codecs.BOM_UTF32_LE + b"a\0\0\0") == "utf-32"
    assert bom_encoding(codecs.BOM_UTF16_LE + b"a\0") == "utf-16"
    assert bom_encoding(b"a\0b\0") == "utf-8-sig"  # no mark: UTF-8, whatever the bytes


def test_bytes_that_do_not_decode_are_left_for_the_reader_to_refuse():
    broken = codecs.BOM_UTF16_LE + b"a\0b"  # an odd number of bytes
    assert as_utf8(broken) == broken
    with pytest.raises(UnicodeDecodeError):
        text_lines(broken)


def test_nul_bytes_without_a_mark_are_named_utf16_or_binary():
    assert "UTF-16 without a byte-order mark" in looks_binary("the cat .\n".encode("utf-16-le"))
    assert "-f UTF-16BE" in looks_binary("the cat .\n".encode("utf-16-be"))
    assert "binary file" in looks_binary(b"\x80\x04\x95" + bytes(range(256)))
    assert looks_binary("the cat .\n".encode("utf-16")) is None  # with its mark: text
    # a program or an array file has NULs on both sides of its byte pairs: binary, not UTF-16 to convert
    program = Path("/bin/ls").read_bytes()[:3000] if Path("/bin/ls").is_file() else b"\x7fELF\x02\x01\x01" + bytes(3000)
    array = b"\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': (100,), }" + bytes(800)
    for data in (program, array):
        assert "binary file" in looks_binary(data)
    assert looks_binary("le café .\n".encode()) is None
