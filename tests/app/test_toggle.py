"""Explore's Bahdanau | Luong | Both toggle, state across pages and in the URL (AppTest, tiny models)."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from attnviz.model.scores import SCORES
from tests.support.app import TEXT, start
from tests.support.paths import APP


def titles(at: AppTest) -> list[str]:
    return [(json.loads(c.proto.spec)["layout"].get("title") or {}).get("text", "") for c in at.get("plotly_chart")]


def test_the_toggle_flips_the_model_and_keeps_sentence_view_beam_and_cell(app_env):
    at = start()
    at.text_input(key="explore_text").set_value(TEXT).run()
    at.slider(key="explore_beam").set_value(2).run()
    at.session_state["explore_cell"] = (1, 2)
    at.run()
    assert at.segmented_control(key="explore_style").value == "luong"
    assert "toyfr-general-luong" in titles(at)[0]
    at.segmented_control(key="explore_style").set_value("bahdanau").run()
    assert not at.exception
    assert "toyfr-general-bahdanau · general / Bahdanau" in titles(at)[0]
    assert at.text_input(key="explore_text").value == TEXT
    assert at.slider(key="explore_beam").value == 2
    assert at.session_state["explore_cell"] == (1, 2)
    assert at.session_state["explore_view"] == "Weights"


def test_both_renders_every_mirrored_view(app_env):
    at = start(explore_style="both", explore_text=TEXT)
    assert not at.exception
    first = titles(at)
    assert any("bahdanau" in t for t in first) and any("luong" in t for t in first)
    heat = [json.loads(c.proto.spec) for c in at.get("plotly_chart")][:2]
    zmax = {next(d["zmax"] for d in h["data"] if d["type"] == "heatmap") for h in heat}
    assert len(zmax) == 1, "one colour scale"
    assert sum(m.value.startswith(("**Bahdanau** ·", "**Luong** ·")) for m in at.markdown) == 2  # both translations
    for view in ("Raw scores", "Per step", "Context vectors", "Attribution", "Difference"):
        at.session_state["explore_view"] = view
        at.run()
        assert not at.exception, view
        assert len(at.get("plotly_chart")) >= 2 and not at.info, view  # a chart for each model at least
    shown = " ".join(titles(at))
    at.session_state["explore_view"] = "Beam search"
    at.run()  # at beam width 1 there is no n-best list: the view says so, by design
    assert not at.exception and not at.get("plotly_chart")
    assert [i.value for i in at.info] == [
        "Greedy decoding (beam width 1). Raise the **Beam width** in the sidebar to see the n-best list."
    ]
    at.slider(key="explore_beam").set_value(3).run()
    assert not at.exception and len(at.table) == 2 and len(at.get("plotly_chart")) >= 2  # each model's n-best
    assert "Attention difference: Luong − Bahdanau" in shown and "Jensen-Shannon" in shown


def test_one_step_slider_drives_both_panels(app_env):
    at = start(
        explore_style="both",
        explore_text="the black cat does not eat the apple of the girl.",
        explore_view="Per step",
        explore_step=0,
    )
    assert not at.exception
    steps = [t for t in titles(at) if t.startswith("Step ")]
    assert len(steps) >= 2 and all(t.startswith("Step 0") for t in steps[:2])  # one step for both panels
    assert len([s for s in at.slider if s.key == "explore_step"]) <= 1


def test_a_missing_combination_is_offered_and_says_why(app_env):
    at = start()
    options = at.selectbox(key="explore_score").options
    assert len(options) == len(SCORES)  # every score, trained or not
    assert any("not trained" in o for o in options) and any("both styles" in o for o in options)
    at.selectbox(key="explore_score").set_value("dot").run()  # toy-fr has no dot model here
    assert not at.exception
    reasons = " ".join(i.value for i in at.info)
    assert "no dot model for" in reasons and "either style" in reasons and "Train page" in reasons
    assert "sibling" not in reasons  # there is none: "Train it" opens the Train form instead
    at.selectbox(key="explore_score").set_value("local_p").run()
    at.segmented_control(key="explore_style").set_value("bahdanau").run()
    assert "bahdanau model for" in " ".join(i.value for i in at.info)
    assert any(b.label == "Train it" for b in at.button)


def test_a_score_without_any_model_keeps_both_and_trains_from_the_train_form(app_env):
    at = start(explore_style="both", explore_text=TEXT)
    at.selectbox(key="explore_score").set_value("dot").run()  # neither style has a dot model here
    assert not at.exception
    assert at.segmented_control(key="explore_style").value == "both"  # Both is not left behind the user's back
    notes = [i.value for i in at.info]
    assert any(n.startswith("**Bahdanau** dot") for n in notes) and any(n.startswith("**Luong** dot") for n in notes)
    assert {b.key for b in at.button if b.label == "Train it"} >= {"explore_train_bahdanau", "explore_train_luong"}
    at.button(key="explore_train_bahdanau").click().run()
    assert not at.exception
    assert at.selectbox(key="train_score").value == "dot" and at.radio(key="train_style").value == "bahdanau"
    assert at.radio(key="train_kind").value == "Built-in task" and at.selectbox(key="train_task").value == "toy-fr"
    assert any("No model of toy-fr has the score function dot yet" in i.value.replace("\\", "") for i in at.info)


def test_state_survives_a_page_change_and_lives_in_the_url(app_env):
    at = start()
    at.text_input(key="explore_text").set_value(TEXT).run()
    at.segmented_control(key="explore_style").set_value("both").run()
    assert at.query_params["text"] in (TEXT, [TEXT]) and at.query_params["style"] in ("both", ["both"])
    at.switch_page("attnviz_app/app_pages/compare.py").run()
    assert not at.exception
    assert at.multiselect(key="cmp_models").value == ["toyfr-general-bahdanau", "toyfr-general-luong"]
    assert at.text_input(key="cmp_sentence").value == TEXT  # Compare opens on Explore's model and sentence
    at.switch_page("attnviz_app/app_pages/explore/explore.py").run()
    assert at.text_input(key="explore_text").value == TEXT
    assert at.segmented_control(key="explore_style").value == "both"


def test_a_shared_link_opens_the_same_view(app_env):
    at = AppTest.from_file(APP, default_timeout=60)
    model = {"task": "toy-fr", "score": "general", "style": "bahdanau"}
    at.query_params.update({**model, "text": TEXT, "view": "Raw scores", "beam": "3", "cell": "1,2"})
    at.run()
    assert not at.exception
    assert at.text_input(key="explore_text").value == TEXT
    assert at.segmented_control(key="explore_style").value == "bahdanau"
    assert at.slider(key="explore_beam").value == 3
    assert at.session_state["explore_view"] == "Raw scores" and at.session_state["explore_cell"] == (1, 2)
    assert "raw scores" in titles(at)[0].replace("<br>", " ")  # a narrow map wraps its title


def test_a_broken_link_falls_back_to_defaults(app_env):
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"beam": "many", "cell": "x", "view": "<b>nope</b>", "style": "diagonal"})
    at.run()
    assert not at.exception
    assert at.slider(key="explore_beam").value == 1 and at.session_state["explore_view"] == "Weights"


def test_attribution_view_draws_attribution_beside_attention_on_one_scale_per_kind(app_env):
    at = start(explore_style="both", explore_text=TEXT, explore_view="Attribution")
    assert not at.exception
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    names = [s["layout"]["title"]["text"] for s in specs]
    assert len(specs) == 4  # per side: attention, then its attribution
    assert ["bahdanau" in n for n in names] == [True, True, False, False]
    assert all("luong" in n for n in names[2:]) and all("integrated gradients" in n for n in names[1::2])
    heat = [next(d for d in s["data"] if d["type"] == "heatmap") for s in specs]
    assert heat[1]["zmin"] == -heat[1]["zmax"] and heat[1]["zmax"] == heat[3]["zmax"]  # one attribution scale
    assert heat[0]["zmax"] == heat[2]["zmax"] and heat[0]["zmin"] == heat[2]["zmin"] == 0  # one weight scale
    assert any("Spearman" in m.value for m in at.markdown)
    table = at.dataframe[0].value
    assert {"attention's first", "attribution's first", "Spearman", "IG delta"} <= set(table.columns)
    at.segmented_control(key="explore_attr_method").set_value("occlusion").run()
    assert not at.exception and "occlusion" in titles(at)[1].lower()


def test_attribution_explains_the_beam_translation_shown_and_offers_more_ig_steps(app_env):
    at = start(explore_text=TEXT, explore_view="Attribution")
    at.slider(key="explore_beam").set_value(5).run()
    assert not at.exception
    explained = at.dataframe[0].value["target"].tolist()[:-1]  # the step table's tokens, <eos> left out
    line = next(m.value for m in at.markdown if " · " in m.value and m.value.startswith("**"))  # the translation
    shown = line.split(": ", 1)[1].replace("\\", "")  # the tiny model: greedy writes nothing, the beam "."
    assert explained and "".join(explained) == shown.replace(" ", "")
    assert any("translation above (beam search)" in c.value for c in at.caption)
    assert at.select_slider(key="explore_attr_steps").value == 32
    at.select_slider(key="explore_attr_steps").set_value(64).run()
    assert not at.exception and "(64 steps)" in titles(at)[1]
    at.segmented_control(key="explore_attr_method").set_value("gxi").run()
    assert not at.exception and not at.get("select_slider")  # steps are integrated gradients' only


def test_one_style_s_attribution_offers_the_figure_for_a_paper(app_env):
    at = start(explore_text=TEXT, explore_view="Attribution")
    assert not at.exception
    assert "explore_paper_attribution_ig_html" in {b.key for b in at.get("download_button")}
