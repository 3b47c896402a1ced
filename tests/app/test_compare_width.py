"""Compare lays its maps out for the main column the browser measured: two maps a row where they fit
side by side, one a row as wide as the column where not, and the difference map no wider."""

from __future__ import annotations

import json

import pytest

from tests.support.app import TEXT, start


@pytest.mark.parametrize(("width", "per_row"), [(820, 2), (560, 1), (358, 1)])
def test_the_grid_fits_the_measured_column(app_env, width, per_row):
    at = start(explore_text=TEXT, explore_page_width=width)  # the width the page's reporter stores
    at.switch_page("attnviz_app/app_pages/compare.py").run()
    at.radio(key="cmp_target_of_free").set_value("reference").run()  # the tiny models may translate to nothing
    at.text_input(key="cmp_reference").input("la fille voit le chat .").run()
    assert not at.exception, at.exception
    figures = [json.loads(chart.proto.spec)["layout"] for chart in at.get("plotly_chart")]
    maps, difference = figures[:-1], figures[-1]
    widths = [f["width"] for f in maps[:2]]
    assert all(w <= (390 if per_row == 2 else width) for w in widths)
    if per_row == 1:
        assert max(widths) > 390 or width < 390  # one map a row takes the column
    if width >= 500:  # narrower, its cells at their smallest make it wider than the column
        assert difference["width"] <= width
