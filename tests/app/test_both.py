"""Both mirrors every Explore view: each panel labelled with its style and model, one colour range
per kind of map, the open view kept through every style change (AppTest, tiny models)."""

from __future__ import annotations

import json

import pytest

from tests.support.app import TEXT, start

VIEWS = [
    "Weights",
    "Raw scores",
    "Per step",
    "Context vectors",
    "Attribution",
    "Beam search",
    "Difference",
    "What-if",
    "Alignment",
    "Export",
]
LABELLED = {"Weights", "Raw scores", "Context vectors", "Attribution", "Beam search", "What-if", "Alignment"}
REFERENCE = "la fille voit le chat ."


def specs(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def title(spec: dict) -> str:
    return (spec["layout"].get("title") or {}).get("text", "")


def heat_ranges(figs: list[dict]) -> set[tuple]:
    return {(d.get("zmin"), d.get("zmax")) for f in figs for d in f["data"] if d["type"] == "heatmap"}


@pytest.mark.parametrize("view", VIEWS)
def test_both_shows_every_view_for_both_models(app_env, view):
    at = start(
        explore_style="both",
        explore_text=TEXT,
        explore_view=view,
        explore_beam=3,
        explore_align_reference=REFERENCE,
        explore_replace_word="dog",
    )
    assert not at.exception, at.exception
    figs = specs(at)
    text = " ".join([title(f) for f in figs] + [m.value for m in at.markdown] + [c.value for c in at.caption])
    assert "Bahdanau" in text and "Luong" in text, view
    if view in LABELLED:  # each side's maps name their model and style
        names = [title(f) for f in figs]
        assert any("bahdanau" in n for n in names) and any("luong" in n for n in names), names
    if view in ("Weights", "Raw scores"):
        assert len(heat_ranges(figs[:2])) == 1  # one colour range for both maps
        assert [b.proto.label for b in at.get("download_button")][:1] == ["HTML"]  # the figure for a paper
    if view == "Attribution":  # the figure for a paper: attention and attribution of both styles
        assert {b.key for b in at.get("download_button")} >= {"explore_paper_attribution_ig_html"}
    if view == "Context vectors":
        maps = [f for f in figs if "context vectors" in title(f)]
        assert len(maps) == 2 and len(heat_ranges(maps)) == 1
    if view == "Beam search":  # every hypothesis of width 3 has its map in both styles (ranks open lazily)
        assert len([f for f in figs if title(f).endswith("#1")]) == 2
        assert len([e for e in at.expander if e.label.startswith("#")]) == 3
    if view == "What-if":
        assert len([f for f in figs if title(f).startswith(("Bahdanau", "Luong"))]) == 4  # forced, replaced: each
    if view == "Export":
        labels = [b.proto.label for b in at.get("download_button")]
        assert labels.count("Weights (CSV)") == 2 and "Both (JSON)" in labels
    if view == "Difference":  # the signed differences as numbers, not only as the map's hue
        assert "Difference (CSV)" in [b.proto.label for b in at.get("download_button")]


def test_the_open_view_survives_entering_and_leaving_both(app_env):
    at = start(explore_text=TEXT, explore_view="Alignment", explore_align_reference=REFERENCE)
    for style in ("both", "bahdanau", "both", "luong"):
        at.segmented_control(key="explore_style").set_value(style).run()
        assert not at.exception
        assert at.session_state["explore_view"] == "Alignment", style
        assert at.session_state["explore_view_tabs"] == "Alignment", style
    at.segmented_control(key="explore_style").set_value("both").run()
    at.session_state["explore_view"] = "Difference"
    at.run()
    at.segmented_control(key="explore_style").set_value("luong").run()  # Difference is Both's only
    assert at.session_state["explore_view_tabs"] == "Weights" and at.session_state["explore_view"] == "Difference"
    link = {k: v[-1] if isinstance(v, list) else v for k, v in at.query_params.items()}
    assert "view" not in link  # the link says what is shown (Weights), never a view one style lacks
    at.segmented_control(key="explore_style").set_value("both").run()
    assert at.session_state["explore_view_tabs"] == "Difference"
    assert at.query_params["view"] in ("Difference", ["Difference"])


def test_a_wide_page_fills_both_columns(app_env):
    narrow = start(explore_style="both", explore_text=TEXT)
    wide = start(explore_style="both", explore_text=TEXT, explore_page_width=1480)
    w_narrow = [f["layout"]["width"] for f in specs(narrow)[:2]]
    w_wide = [f["layout"]["width"] for f in specs(wide)[:2]]
    assert all(w <= (820 - 16) // 2 for w in w_narrow)
    assert all((1480 - 16) // 2 * 0.8 <= w <= (1480 - 16) // 2 for w in w_wide), w_wide


def test_the_difference_files_say_which_model_is_subtracted(app_env, download_names):
    at = start(explore_style="both", explore_text=TEXT, explore_view="Difference")
    assert not at.exception, at.exception
    csv = download_names["Difference (CSV)"]  # Luong's weights minus Bahdanau's, as the map's title says
    assert "-luong-minus-bahdanau-" in csv and csv.endswith("-difference.csv"), csv
    images = [json.loads(c.proto.config)["toImageButtonOptions"]["filename"] for c in at.get("plotly_chart")]
    assert csv.removesuffix(".csv") in images  # the map's camera button names it alike


def test_both_names_each_coverage_chart(app_env):
    at = start(explore_style="both", explore_text=TEXT, explore_view="Weights", explore_coverage_open=True)
    assert not at.exception, at.exception
    names = [title(f) for f in specs(at) if title(f).startswith("Coverage")]
    assert len(names) == 2 and "Bahdanau" in names[0] and "Luong" in names[1], names


def test_the_difference_view_keeps_to_the_steps_both_have_and_says_where_they_part(app_env):
    """(The entropy plot drew each decode's own steps beside a map cut to the common ones; rows that
    compare different words after the translations part were not pointed out.)"""
    for text in (TEXT, "cat", "the cat", "the black cat eats", ".", "the girl", "apple apple apple"):
        at = start(explore_style="both", explore_text=text, explore_view="Difference")
        assert not at.exception, at.exception
        if any("steps both have" in i.value for i in at.info):
            break
    else:
        raise AssertionError("no sentence whose two translations differ in length")
    figs = specs(at)
    rows = len(figs[0]["layout"]["yaxis"]["ticktext"])  # the difference map's target steps
    entropy = next(f for f in figs if "ntropy" in title(f))
    assert {len(trace["x"]) for trace in entropy["data"] if trace.get("x")} == {rows}, (
        "entropy over the steps both have"
    )
    labels = figs[0]["layout"]["yaxis"]["ticktext"]  # `x / y` where the two wrote different tokens
    parted = [t for t, label in enumerate(labels) if " / " in label]
    said = any(f"The two translations part at step {parted[0] if parted else ''}" in i.value for i in at.info)
    assert said == bool(parted and parted[0] < len(labels) - 1), labels
