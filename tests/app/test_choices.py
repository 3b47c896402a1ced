"""Select boxes whose labels follow the data (attnviz_app/app_pages/shared/choices.py): Streamlit hands a
page the label a browser still shows when that label is no longer offered, as a plain string; it is read
back to the option it stood for, or the default. (tests/browser/test_choices.py drives the real boxes.)"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _kept(n: int, prefix: str) -> None:
    import streamlit as st

    from attnviz_app.app_pages.shared.choices import keep_choice

    value = keep_choice("box", range(n), lambda i: f"{i}: {prefix}{i}", 0)
    st.write(f"value {value!r}")


def test_a_label_the_box_showed_is_read_back_to_its_option():
    at = AppTest.from_function(_kept, args=(4, "old"), default_timeout=30).run()
    assert at.session_state["box__labels"] == {f"{i}: old{i}": i for i in range(4)}
    at = AppTest.from_function(_kept, args=(4, "new"), default_timeout=30)
    at.session_state["box"], at.session_state["box__labels"] = "2: old2", {"2: old2": 2}  # what the browser sent
    at.run()
    assert at.session_state["box"] == 2 and at.markdown[0].value == "value 2"
    assert at.session_state["box__labels"]["2: new2"] == 2  # this run's labels, for the next one


def test_a_string_that_stands_for_no_option_or_one_out_of_range_is_the_default():
    at = AppTest.from_function(_kept, args=(3, "x"), default_timeout=30)
    at.session_state["box"], at.session_state["box__labels"] = "7: gone", {"7: gone": 7}
    at.run()
    assert at.session_state["box"] == 0
    at.session_state["box"] = "never shown"
    at.run()
    assert at.session_state["box"] == 0
    at.session_state["box"] = 2  # a valid option stays
    at.run()
    assert at.session_state["box"] == 2
