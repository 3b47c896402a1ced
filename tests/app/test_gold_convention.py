"""The one gold-convention widget (attnviz_app/app_pages/shared/gold_convention.py) as a page calls it: auto-detect's
finding in a caption, the chosen format and base returned as parse_gold takes them, and a file that
contradicts the chosen convention read into one clear message."""

from __future__ import annotations

import re

from streamlit.testing.v1 import AppTest

TALP_1 = ["1-1 2-2 3p3", "1-1 2-2"]  # talp, 1-based: index 3 is the first pair's length
PHARAOH_0 = ["0-0 1?2 2-1", "0-0 1-1"]  # Pharaoh, 0-based: an index 0
LENGTHS = [(3, 3), (2, 2)]


def _script():
    """A page's use: the widget, then the file read in the convention it returns (one error if it does not fit)."""
    import streamlit as st

    from attnviz.errors import AttnvizError
    from attnviz.links import parse_gold
    from attnviz_app.app_pages.shared.common import escape_markdown
    from attnviz_app.app_pages.shared.gold_convention import gold_convention

    lines, lengths = st.session_state["lines"], st.session_state["lengths"]

    def read(fmt, base):
        return parse_gold(lines, lengths, fmt, base, name="gold.txt")

    fmt, base = gold_convention("t", lambda f, b: read(f, b).convention())
    gold_convention("other")  # a second caller on the page: its own keys, no file yet
    st.markdown(f"chosen {fmt} {base}")
    try:
        got = read(fmt, base)
    except AttnvizError as e:
        st.error(escape_markdown(str(e)))
        return
    st.markdown(f"read {got.format} {got.base}-based ({got.how.split(':')[0]}): {sorted(got.alignments[0].possible)}")


def run(lines: list[str]) -> AppTest:
    at = AppTest.from_function(_script, default_timeout=30)
    at.session_state["lines"], at.session_state["lengths"] = lines, LENGTHS
    return at.run()


def unescape(markdown: str) -> str:
    """The text Markdown shows: escapes undone, the word joiners that keep links from forming dropped."""
    return re.sub(r"\\(.)", r"\1", markdown).replace("\u2060", "")


def texts(elements) -> list[str]:
    return [unescape(e.value) for e in elements]


def test_auto_detect_reads_a_talp_1_based_file_and_says_what_it_found():
    at = run(TALP_1)
    assert not at.exception and not at.error
    assert at.radio(key="t_format").options == [
        "Auto-detect",
        "Pharaoh (i-j, i?j, i-j-P)",
        "talp (i-j, ipj)",
        "NAACL (sent i j [S|P])",
    ]
    assert at.radio(key="t_base").options == ["Auto-detect", "0 (first word is 0)", "1 (first word is 1)"]
    assert at.radio(key="other_format").value == "auto" and at.radio(key="other_base").value == "auto"
    assert texts(at.caption) == [
        "Auto-detect: talp (one line a pair, i-j sure, ipj possible), 1-based (detected: 0-based is ruled out, "
        "line 1: link 3-3 has an index equal to its sentence's length (3 source and 3 target words))."
    ]
    assert texts(at.markdown) == ["chosen auto auto", "read talp 1-based (detected): [(0, 0), (1, 1), (2, 2)]"]


def test_an_explicit_pharaoh_0_based_choice_is_returned_and_kept_across_reruns():
    at = run(PHARAOH_0)
    at.radio(key="t_format").set_value("pharaoh").run()
    at.radio(key="t_base").set_value(0).run()
    assert not at.exception and not at.error
    assert texts(at.markdown) == ["chosen pharaoh 0", "read pharaoh 0-based (given): [(0, 0), (1, 2), (2, 1)]"]
    assert texts(at.caption)[0].startswith(
        "Auto-detect: pharaoh (one line a pair, i-j sure, i?j or i-j-P possible), "
        "0-based (detected: 1-based is ruled out, line 1: link 0-0 has an index 0"
    )
    at.run()  # a rerun keeps the choice; the other caller's radios are untouched
    assert (at.radio(key="t_format").value, at.radio(key="t_base").value) == ("pharaoh", 0)
    assert at.radio(key="other_format").value == "auto"


def test_a_file_that_contradicts_the_chosen_convention_gets_one_clear_message():
    at = run(TALP_1)
    at.radio(key="t_base").set_value(0).run()
    assert not at.exception and len(at.error) == 1
    assert texts(at.error)[0] == (
        "gold.txt line 1: link 3-3 has an index equal to its sentence's length (3 source "
        "and 3 target words); the indices fit 1-based: read it 1-based (index base 1) or "
        "auto-detect"
    )
    assert texts(at.caption)[0].startswith("Auto-detect: talp (")  # what would fit stays in view
    at.radio(key="t_base").set_value("auto").run()
    at.radio(key="t_format").set_value("pharaoh").run()
    assert len(at.error) == 1 and texts(at.error)[0].startswith("gold.txt line 1: '3p3' is not a Pharaoh link")
    assert "read it as talp (format talp) or auto-detect" in texts(at.error)[0]


def test_a_malformed_file_gets_one_message_and_no_caption():
    at = run(["0-0 1-x", "0-0"])
    assert not at.exception and not at.caption
    assert len(at.error) == 1 and texts(at.error)[0].startswith("gold.txt line 1: '1-x' is not a gold link")
