"""Compare keeps what the user chose and follows what they change (AppTest, tiny toy-fr models): a new
test pair brings its own reference, the difference's A and B stay two models when one leaves the grid,
and a first visit to Explore does not replace a choice made on Compare opened directly."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.support.paths import APP

COMPARE = "attnviz_app/app_pages/compare.py"
MODELS = ["toyfr-general-luong", "toyfr-general-bahdanau", "toyfr-additive-bahdanau"]


def compare_directly() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.switch_page(COMPARE).run()
    assert not at.exception, at.exception
    return at


def test_a_new_test_pair_brings_its_own_reference_and_its_aer(app_env):
    """(The first pair's reference stayed: every model was forced through it against the next pair's
    source, and the AER table was gone.)"""
    at = compare_directly()
    at.multiselect(key="cmp_models").set_value(MODELS[:2]).run()
    at.toggle(key="cmp_use_pair").set_value(True).run()
    first = at.text_input(key="cmp_reference").value
    assert first and aer_shown(at)
    at.number_input(key="cmp_pair").set_value(1).run()
    assert not at.exception, at.exception
    second = at.text_input(key="cmp_reference").value
    assert second and second != first and aer_shown(at)


def aer_shown(at: AppTest) -> bool:
    """The AER table (a row per model) is drawn, with its formula under it."""
    return any(c.value.startswith("AER = 1") for c in at.caption) and len(at.dataframe[-1].value) == 2


def test_the_difference_stays_two_models_when_one_leaves_the_grid(app_env):
    """(Removing model A made A and B the same: a blank map, a divergence of 0.)"""
    at = compare_directly()
    at.radio(key="cmp_target_of_free").set_value("reference").run()  # the tiny models may translate to nothing
    at.text_input(key="cmp_reference").input("la fille voit le chat .").run()
    at.multiselect(key="cmp_models").set_value(MODELS).run()
    first_a = at.selectbox(key="cmp_a").value
    assert first_a != at.selectbox(key="cmp_b").value
    at.multiselect(key="cmp_models").set_value([m for m in MODELS if m != first_a]).run()  # A leaves the grid
    assert not at.exception, at.exception
    a, b = at.selectbox(key="cmp_a").value, at.selectbox(key="cmp_b").value
    assert a != b and first_a not in (a, b)
    at.selectbox(key="cmp_b").set_value(a).run()  # asked for: A = B stays
    assert at.selectbox(key="cmp_a").value == at.selectbox(key="cmp_b").value == a


def test_a_first_visit_to_explore_keeps_what_compare_opened_directly_chose(app_env):
    """(Explore's first run put its defaults where nothing was, which Compare read as a change there.)"""
    at = compare_directly()
    at.multiselect(key="cmp_models").set_value([MODELS[2], MODELS[0]]).run()
    at.text_input(key="cmp_sentence").input("the cat sees the girl .").run()
    at.switch_page("attnviz_app/app_pages/explore/explore.py").run()
    at.switch_page(COMPARE).run()
    assert not at.exception, at.exception
    assert at.multiselect(key="cmp_models").value == [MODELS[2], MODELS[0]]
    assert at.text_input(key="cmp_sentence").value == "the cat sees the girl ."


def test_compares_files_say_forced_and_which_model_is_subtracted(app_env, download_names):
    """(Compare's difference CSV had Explore's name with the opposite sign; its camera images were
    'difference.png', 'entropy.png', 'js.png'.)"""
    import json

    at = compare_directly()
    at.radio(key="cmp_target_of_free").set_value("reference").run()
    at.text_input(key="cmp_reference").input("la fille voit le chat .").run()
    at.multiselect(key="cmp_models").set_value(MODELS[:2]).run()
    assert not at.exception, at.exception
    a, b = at.selectbox(key="cmp_a").value, at.selectbox(key="cmp_b").value
    first, second = (name.rsplit("-", 1)[1] for name in (a, b))  # toyfr-general-luong -> luong
    assert f"toyfr-general-{first}-minus-{second}-" in download_names["Difference (CSV)"]
    assert download_names["Difference (CSV)"].endswith("-forced-difference.csv")
    images = [json.loads(c.proto.config)["toImageButtonOptions"]["filename"] for c in at.get("plotly_chart")]
    assert all("-forced-" in image for image in images), images


def test_one_model_is_asked_for_a_second_not_compared(app_env):
    at = compare_directly()
    at.multiselect(key="cmp_models").set_value(MODELS[:1]).run()
    assert not at.exception and "Pick at least two models" in at.info[0].value
    assert not at.get("plotly_chart")
