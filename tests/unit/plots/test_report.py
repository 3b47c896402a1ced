"""The alignment report page: one section per sentence, worst first, plotly.js once, every word escaped."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.errors import InputError
from attnviz.links import ReportSentence
from attnviz.plots import ReportSummary, report_html, worst_first

HOSTILE = "<script>alert(1)</script>"


def _sentence(index: int, score: float, gold: bool = True) -> ReportSentence:
    src, tgt = ["the", HOSTILE, "cat"], ["le", "chat"]
    weights = np.full((2, 3), 1 / 3)  # [tgt, src]
    links = [(0, 0), (2, 1)]
    if gold:
        return ReportSentence(index, src, tgt, weights, links, score, sure=[(0, 0)], possible=[(0, 0), (2, 1)])
    return ReportSentence(index, src, tgt, weights, links, score, eflomal=[(0, 0), (1, 1)])


def _summary(measure: str = "AER") -> ReportSummary:
    return ReportSummary("toy <b>model</b>", "toy-fr", "argmax", measure, f"attnviz align-report --out '{HOSTILE}'")


def test_one_section_per_sentence_worst_first():
    page = report_html([_sentence(3, 0.1), _sentence(7, 0.5), _sentence(1, 0.3)], _summary())
    assert page.count("<section") == 3
    assert page.index('id="pair-7"') < page.index('id="pair-1"') < page.index('id="pair-3"')
    assert "mean AER against gold</th><td>0.300" in page and "<th>sentences</th><td>3</td>" in page
    assert page.count("window.PlotlyConfig") == 1  # plotly.js inlined once


def test_agreement_puts_the_lowest_first():
    ordered = worst_first([_sentence(0, 0.9, False), _sentence(1, 0.2, False)], "agreement")
    assert [s.index for s in ordered] == [1, 0]
    page = report_html(ordered, _summary("agreement"))
    assert "agreement (F1) with eflomal" in page and "lowest agreement first" in page
    with pytest.raises(InputError, match="choose one of"):
        worst_first(ordered, "bleu")


def test_no_user_text_is_rendered_as_html():
    page = report_html([_sentence(0, 0.5)], _summary())
    assert HOSTILE not in page and "<b>model</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # the sentence, the command and the figure's ticks
