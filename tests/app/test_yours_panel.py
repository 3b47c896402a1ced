"""Your model's shared panel as the other sources call it (``show_alignments(dict, key)``): one
alignment or several compared, the views, links scored against pasted gold, the exports."""

from __future__ import annotations

import json
import re

from streamlit.testing.v1 import AppTest


def plain(markdown: str) -> str:
    """A message as the user reads it (Markdown escapes removed)."""
    return re.sub(r"\\(.)", r"\1", markdown)


def _script():
    from attnviz_app.app_pages.yours import panel
    from tests.support.alignments import make_alignment

    source, target = ["the", "black", "cat", "."], ["le", "chat", "noir", "."]
    panel.show_alignments({f"matrix {k}": make_alignment(source, target, seed=k) for k in range(3)}, "t")


def _empty():
    from attnviz_app.app_pages.yours import panel

    panel.show_alignments({}, "t")


def test_one_matrix_then_three_compared_on_one_scale():
    at = AppTest.from_function(_script, default_timeout=60).run()
    assert not at.exception
    assert at.multiselect(key="t_matrix").value == ["matrix 0"]
    at.multiselect(key="t_matrix").set_value(["matrix 0", "matrix 1", "matrix 2"]).run()
    (fig,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]  # one figure, the maps in rows
    heat = [t for t in fig["data"] if t["type"] == "heatmap"]
    assert len(heat) == 3 and len({(t.get("zmin"), t.get("zmax")) for t in heat}) == 1  # one colour scale
    assert sum(bool(t.get("showscale")) for t in heat) == 1  # one colour bar
    assert [a["text"] for a in fig["layout"]["annotations"]] == ["matrix 0", "matrix 1", "matrix 2"]
    at.segmented_control(key="t_view").set_value("Per step").run()
    assert not at.exception and len(at.get("plotly_chart")) == 1


def test_links_scored_against_pasted_gold_and_a_malformed_gold_line():
    at = AppTest.from_function(_script, default_timeout=60).run()
    at.segmented_control(key="t_view").set_value("Word links and gold").run()
    at.text_input(key="t_gold").set_value("0-0 1-2 2-1 3-3").run()
    assert not at.exception and not at.error
    table = at.dataframe[0].value
    assert list(table["aligner"]) == ["matrix 0"] and table["sure links"][0] == 4
    at.segmented_control(key="t_method").set_value("dtw").run()
    assert not at.exception and 0 <= at.dataframe[0].value["AER"][0] <= 1
    at.text_input(key="t_gold").set_value("0-9").run()
    assert "is outside its sentence" in at.error[0].value


def test_pasted_gold_in_the_shared_convention_widget_1_based_detected_and_a_contradicting_base():
    at = AppTest.from_function(_script, default_timeout=60).run()
    at.segmented_control(key="t_view").set_value("Word links and gold").run()
    at.text_input(key="t_gold").set_value("0-0 1-2 2-1 3-3").run()
    zero_based = at.dataframe[0].value
    at.text_input(key="t_gold").set_value("1-1 2-3 3-2 4-4").run()  # the same links, 1-based: 4 is a length
    assert not at.exception and not at.error
    assert at.dataframe[0].value.equals(zero_based)
    captions = [plain(c.value) for c in at.caption]
    sure_only = "Auto-detect: pharaoh or talp (one line a pair, i-j sure; no possible link, so the two coincide)"
    assert any(c.startswith(f"{sure_only}, 1-based (detected: 0-based is ruled out") for c in captions), captions
    at.radio(key="t_gold_base").set_value(0).run()
    assert not at.exception and len(at.error) == 1 and not at.dataframe
    assert "link 4-4 has an index equal to its sentence's length" in plain(at.error[0].value)
    at.radio(key="t_gold_base").set_value(1).run()
    at.radio(key="t_gold_format").set_value("naacl").run()  # a Pharaoh line read as NAACL: named, not a crash
    assert not at.exception and len(at.error) == 1
    assert "read it as Pharaoh (format pharaoh)" in plain(at.error[0].value)


def test_exports_and_nothing_to_show():
    at = AppTest.from_function(_script, default_timeout=60).run()
    at.segmented_control(key="t_view").set_value("Export").run()
    assert not at.exception and len(at.get("download_button")) == 3
    at = AppTest.from_function(_empty, default_timeout=60).run()
    assert at.info[0].value == "Nothing to show."


def test_export_names_keep_matrices_and_sentences_apart_in_any_script():
    from attnviz_app.app_pages.yours.panel import _file_name
    from tests.support.alignments import make_alignment

    al = make_alignment(["the", "black", "cat"], ["le", "chat", "noir"])  # each side ends in <eos>
    assert _file_name("layer 0 head 0", al, ".csv") == "layer-0-head-0-the-black-cat.csv"
    names = {_file_name(n, al, ".json") for n in ("注意力", "Внимание 1", "Внимание 2", "头")}
    assert len(names) == 4 and all(n.endswith("-the-black-cat.json") and not n.startswith("-") for n in names)
    other = make_alignment(["der", "Hund"], ["the", "dog"])
    assert _file_name("layer 0 head 0", other, ".csv") == "layer-0-head-0-der-Hund.csv"
