"""The Learn and Train pages write their symbols as math (``$s_{t-1}$``, rendered by the browser),
never as LaTeX source shown literally, and the additive score reads one query in one notation."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from attnviz.explain import all_scores, default_parameters, score_doc, score_formula, worked_example, worked_lines
from attnviz.model import SCORES
from tests.support.paths import APP

# LaTeX source: a subscript or superscript (s_{t-1}, h_t, e^2), or a command (\bar)
RAW = re.compile(r"[A-Za-z]_[{A-Za-z0-9]|\^[{0-9]|\\[a-z]+")
MATH_OR_CODE = re.compile(r"\$[^$]+\$|`[^`]+`")


def raw_latex(text: str) -> list[str]:
    """What ``text`` shows as LaTeX source once its math and code spans are set aside."""
    return RAW.findall(MATH_OR_CODE.sub(" ", text))


def shown_texts(at: AppTest) -> list[str]:
    """Every text the page writes: Markdown, captions, alerts, widget labels and options."""
    texts = [e.value for kind in ("markdown", "caption", "info", "warning", "success") for e in getattr(at, kind)]
    for kind in ("text_input", "selectbox", "radio", "number_input", "toggle", "button", "expander", "pills"):
        texts += [w.label for w in getattr(at, kind)]
    texts += [option for radio in at.radio for option in radio.options]
    return texts


def open_page(name: str, **state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    at.switch_page(f"attnviz_app/app_pages/{name}").run()
    assert not at.exception, at.exception
    return at


def test_the_checker_sees_latex_source():
    assert raw_latex("Query h_t and s_{t-1}, e^2, \\bar h") == ["h_t", "s_{", "^2", "\\bar"]
    assert raw_latex("Query $h_t$, `W_a [A, Q]`, `local_p`") == []
    assert raw_latex("local_p") == ["l_p"]  # a name with an underscore belongs in a code span


@pytest.mark.parametrize("score", ["additive", "local_p"])
def test_learn_writes_every_symbol_as_math(app_env, score):
    at = open_page("learn.py", learn_worked_score=score, learn_score=score)
    found = {t: raw_latex(t) for t in shown_texts(at) if raw_latex(t)}
    assert not found, found
    assert any(f"${p}$" == t.label for t in at.text_input for p in ("W_a", "W_p"))  # the parameters' boxes
    docs = [m.value for m in at.markdown if m.value == score_doc(score)]
    assert docs and "``" not in docs[0] and ":math:" not in docs[0]


def test_train_writes_every_symbol_as_math(app_env):
    at = open_page("train/train.py")
    found = {t: raw_latex(t) for t in shown_texts(at) if raw_latex(t)}
    assert not found, found
    assert at.radio(key="train_style").options == ["Bahdanau (attend with $s_{t-1}$)", "Luong (attend with $h_t$)"]


def test_the_additive_score_reads_one_query_in_the_notation_of_the_worked_lines():
    luong, bahdanau = score_formula("additive", "luong"), score_formula("additive", "bahdanau")
    assert "h_t" in luong and "s_{t-1}" not in luong and "s_{t-1}" in bahdanau and "h_t" not in bahdanau
    lines = worked_lines(worked_example([3, 1], [[2, 6]], "additive", step=0))["score"]
    assert all(r"\bar h" in f for f in (luong, bahdanau)) and any(r"U_a \bar h_{0}" in line for line in lines)
    assert not any("h_j" in f or "e_{tj}" in f for f in (luong, bahdanau))  # no second notation for the keys
    doc = score_doc("additive")
    assert "$s_{t-1}$ with the Bahdanau decoder" in doc and "$h_t$ with Luong's" in doc


def test_every_docstring_becomes_markdown_with_math():
    for score in all_scores():
        doc = score_doc(score)
        assert "``" not in doc and ":math:" not in doc and ":class:" not in doc, score
        assert not raw_latex(doc) or score == "dot", (score, raw_latex(doc))


def _caption(query, keys, score):
    from attnviz_app.app_pages.shared.learn_ui import closing_caption

    return closing_caption(worked_example(query, keys, score))


def test_the_closing_caption_says_what_the_weights_shown_say():
    """Ties name every tied key and, under local-p, that the Gaussian splits them; a huge gap is a
    power of ten, not inf; the ratio is e to the gap as printed; local-p's share is of the row's total."""
    tie = _caption([1, 1], [[1, 0], [0, 1], [0.5, 0.5]], "local_p")  # weights 0, 0.1715, 0.4492
    assert "Gaussian" in tie and "each takes" not in tie and "(0.4492)" in tie
    three = _caption([1, 1], [[1, 0], [0, 1], [0.5, 0.5]], "dot")
    assert r"$\bar h_{0}$, $\bar h_{1}$ and $\bar h_{2}$ tie" in three
    huge = _caption([1000, 1000], [[1000, 1000], [999, 1000]], "dot")
    assert r"$e^{1000} \approx 10^{434}$" in huge and "inf" not in huge
    assert r"$e^{6.36} \approx 578$" in _caption([3, 1], [[2, 6], [1, 0], [0, 2]], "scaled_dot")
    share = _caption([3, 1], [[2, 6], [1, 0], [0, 2]], "local_p")  # 0.2301 of a row summing to 0.4472
    assert "takes most of the weight (0.2301)" in share


def test_learn_shows_an_impossible_pairing_as_a_message(app_env, monkeypatch):
    """dot at sizes it cannot take (annotations of another size than the decoder's) is a message."""
    from attnviz.errors import ConfigError
    from attnviz.explain import worked

    def refuse(*args, **kwargs):
        raise ConfigError("dot attention compares decoder states (size 16) with encoder annotations (size 24)")

    monkeypatch.setattr(worked, "score_parameters", refuse)
    monkeypatch.setattr("attnviz.explain.score_parameters", refuse)
    at = open_page("learn.py")
    assert any("impossible at the sizes of" in i.value for i in at.info)


@pytest.mark.parametrize("score", [score for score in SCORES if default_parameters(score, 2, 3)])
def test_learn_works_every_score_through_with_its_formula_parameters(score):
    """Every registered score with parameters, each in a box under its name in the formula."""
    at = open_page("learn.py")
    at.selectbox(key="learn_worked_score").set_value(score).run()
    assert not at.exception and not at.error
    boxes = {t.label for t in at.text_input} - {"Query $h_t$", r"Keys $\bar h_s$ (one per ';')"}
    assert {f"${name}$" for name in default_parameters(score, 2, 3)} == boxes - {"Sentence", "Source sentence"}
    assert any(r"\times 10^" in line.value or "e_" in line.value for line in at.latex)
    assert not any("e-0" in line.value for line in at.latex)  # never "e minus 05"


def test_a_score_with_a_single_number_parameter_works_through_in_learn(gain_dot):
    """A new score whose parameter is one number (a temperature, a gain) gets a box holding that
    number, and the worked example uses what is typed there; several numbers are a message."""
    at = open_page("learn.py")
    at.selectbox(key="learn_worked_score").set_value(gain_dot).run()
    assert not at.exception and not at.error
    box = at.text_input(key=f"learn_param_{gain_dot}_g")
    assert box.label == "$g$" and box.value == "2"
    first = r"e_{0,0} = g \cdot h_t^\top \bar h_{0} = "  # the query (3, 1) against the key (2, 6): g times 12
    assert any(first + "24" in line.value for line in at.latex)
    box.set_value("3").run()
    assert not at.exception and any(first + "36" in line.value for line in at.latex)
    box.set_value("1, 2").run()
    assert not at.exception and any("g must be one number for gain\\_dot" in e.value for e in at.error)


def test_an_emptied_box_is_a_message():
    at = open_page("learn.py")
    at.selectbox(key="learn_worked_score").set_value("additive").run()
    at.text_input(key="learn_param_additive_v_a").set_value(";").run()
    assert not at.exception and [e.value for e in at.error] == [
        "v\\_a is empty; type its numbers \\(rows separated by ';'\\)"
    ]
