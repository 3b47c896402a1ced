"""Text shown literally through Markdown (``escape_markdown``): no link from a URL, a ``www.`` name or
an e-mail address (GFM links them even escaped), and no mark that turns the rest of a line around."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from attnviz_app.app_pages.shared.common import escape_markdown, quoted

WJ = "\u2060"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("see http://phish.example/login", f"see http{WJ}\\://phish\\.example/login"),
        ("HTTPS://x.y", f"HTTPS{WJ}\\://x\\.y"),
        ("www.phish.example", f"www{WJ}\\.phish\\.example"),
        ("WWW.x.org", f"WWW{WJ}\\.x\\.org"),
        ("victim@phish.example", f"victim{WJ}@phish\\.example"),
        ("a.b: 3.5 (c) **d**", "a\\.b\\: 3\\.5 \\(c\\) \\*\\*d\\*\\*"),  # no link: as before
        ("safe\u202eexe.txt", "safe\\[U\\+202E\\]exe\\.txt"),
        ("\u2067مرحبا\u2069", "\\[U\\+2067\\]مرحبا\\[U\\+2069\\]"),
        ("\u200fשלום", "\u200fשלום"),  # a right-to-left mark turns nothing after it: kept
        (":material/home: :streamlit:", f"\\:{WJ}material/home\\: \\:{WJ}streamlit\\:"),  # no icon, no logo
        ("text\n===\nmore", "text \\=\\=\\= more"),  # no heading from an underline
        ("a\r\nb\u2028c", "a b c"),  # one line, as it is shown
    ],
)
def test_links_are_broken_and_direction_overrides_shown(text, shown):
    assert escape_markdown(text) == shown


def test_quoted_still_isolates_a_word():
    assert quoted("x@y") == f"“\u2068x{WJ}@y\u2069”"


def _page(text: str) -> None:
    import streamlit as st

    from attnviz_app.app_pages.shared.common import escape_markdown

    st.markdown(escape_markdown(text))


@pytest.mark.parametrize("text", ["http://e.example/x www.e.example me@e.example", "[a](javascript:alert(1)) <b>b</b>"])
def test_the_markdown_element_gets_the_escaped_text(text):
    at = AppTest.from_function(_page, args=(text,)).run()
    assert not at.exception and at.markdown[0].value == escape_markdown(text)
