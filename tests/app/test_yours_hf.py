"""Your model, Hugging Face folder: a tiny Marian folder by path, the heads grid scored against gold, a
head opened, heads compared, links scored, the refusals (the zip's unpacking: tests/unit/external)."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.support.hf_models import GOLD, REFERENCE, SENTENCES, SOURCE, marian_folder
from tests.support.paths import APP


@pytest.fixture(autouse=True)
def hf_folders(tmp_path_factory, monkeypatch):
    """The app opens folders by path only under the models folder and $ATTNVIZ_HF_FOLDERS."""
    monkeypatch.setenv("ATTNVIZ_HF_FOLDERS", str(tmp_path_factory.getbasetemp()))


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return marian_folder(tmp_path_factory.mktemp("hf") / "opus-mt-tiny")


def page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("attnviz_app/app_pages/yours/yours.py").run()
    return at


def figures(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def array(value) -> np.ndarray:
    """A figure's array as the JSON holds it: a list, or a typed array ``{"dtype", "bdata", "shape"}``."""
    if isinstance(value, dict):
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        return flat.reshape([int(n) for n in str(value["shape"]).split(",")]) if "shape" in value else flat
    return np.asarray(value, dtype=float)


def _open(at: AppTest, folder, reference: str = "") -> AppTest:
    at.text_input(key="yours_hf_path").set_value(str(folder)).run()
    at.text_input(key="yours_hf_text").set_value(SOURCE).run()
    if reference:
        at.text_input(key="yours_hf_reference").set_value(reference).run()
    return at


def test_a_name_alone_is_a_folder_in_the_models_folder(folder, monkeypatch):
    monkeypatch.setenv("ATTNVIZ_MODELS", str(folder.parent))
    monkeypatch.delenv("ATTNVIZ_HF_FOLDERS")  # only the models folder is allowed
    at = _open(page(), folder.name)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("marian, 3 decoder layers × 4 cross" in c.value for c in at.caption)
    at.text_input(key="yours_hf_path").set_value("../elsewhere").run()  # relative, but out of the folder
    assert at.error[0].value.startswith("This server opens model folders only inside its models folder")


def test_a_folder_by_path_translates_and_shows_the_heads_grid(folder):
    at = _open(page(), folder)
    assert not at.exception and not at.error
    assert any("marian, 3 decoder layers × 4 cross" in c.value for c in at.caption)
    assert any("Translation" in m.value for m in at.markdown)
    grid = figures(at)[0]
    assert sum(1 for t in grid["data"] if t["type"] == "heatmap") == 12  # 3 layers x 4 heads
    titles = [f["layout"].get("title", {}).get("text", "") for f in figures(at)[1:]]
    assert any("all layers and heads" in t for t in titles)
    assert at.text_input(key="yours_hf_compare").placeholder == "2:0 2:1"  # heads this model has


def test_the_grid_fills_the_page_on_the_scale_chosen_with_word_ticks(folder):
    at = _open(page(), folder, REFERENCE)
    grid = figures(at)[0]
    assert at.segmented_control(key="yours_hf_grid_scale").value == "map"
    assert any(c.value.startswith("Click a map") and "Colours per map" in c.value for c in at.caption)
    heat = [t for t in grid["data"] if t["type"] == "heatmap"]
    assert all(array(t["z"]).max() == pytest.approx(1) for t in heat)  # each map up to its own largest weight
    assert 760 <= grid["layout"]["width"] <= 784  # the page's width (820 px until the browser says) in an expander
    layout = grid["layout"]
    assert layout["xaxis9"]["ticktext"] == SOURCE.split() and layout["yaxis"]["ticktext"] == REFERENCE.split()
    weights = [array(t["customdata"])[:, 2].max() for t in grid["data"] if t["type"] == "scatter"]
    at.segmented_control(key="yours_hf_grid_scale").set_value("grid").run()
    shared = figures(at)[0]
    assert shared["layout"]["coloraxis"]["cmax"] == pytest.approx(max(weights))
    assert any("Colours shared across the grid" in c.value for c in at.caption)
    at.segmented_control(key="yours_hf_grid_scale").set_value("fixed").run()
    assert figures(at)[0]["layout"]["coloraxis"]["cmax"] == 1 and not at.exception


def test_gold_scores_every_head_and_a_head_opens_and_compares(folder):
    at = _open(page(), folder, REFERENCE)
    keys = {r.key for r in at.radio}
    assert "yours_hf_gold_format" not in keys and "yours_hf_panel_gold_format" not in keys  # no links, no question
    at.text_input(key="yours_hf_gold").set_value(GOLD).run()
    assert not at.exception and not at.error
    assert "yours_hf_gold_format" in {r.key for r in at.radio}
    titles = [a["text"] for a in figures(at)[0]["layout"]["annotations"]]
    assert len(titles) == 12 and all(" · " in t for t in titles)
    scores = [float(t.replace("</b>", "").split(" · ")[1]) for t in titles]
    assert [t.startswith("<b>") for t in titles] == [s == min(scores) for s in scores]  # every tied best head
    assert any(c.value.startswith(r"Auto\-detect\: pharaoh") for c in at.caption)  # the shared convention widget
    at.radio(key="yours_hf_gold_base").set_value(1).run()  # the pair's links given 1-based, and they hold a 0
    assert not at.exception and at.error and "has an index 0" in at.error[0].value
    one_based = " ".join(f"{int(i) + 1}-{int(j) + 1}" for i, j in (link.split("-") for link in GOLD.split()))
    at.text_input(key="yours_hf_gold").set_value(one_based).run()  # the same links 1-based: the same AERs
    assert not at.exception and not at.error
    assert [a["text"] for a in figures(at)[0]["layout"]["annotations"]] == titles
    at.radio(key="yours_hf_gold_base").set_value("auto").run()
    at.text_input(key="yours_hf_gold").set_value(GOLD).run()
    at.selectbox(key="yours_hf_layer").set_value(1).run()
    at.selectbox(key="yours_hf_head").set_value(2).run()
    at.text_input(key="yours_hf_compare").set_value("0:1 2:3").run()
    assert at.multiselect(key="yours_hf_panel_matrix").value == [
        "layer 1, head 2",
        "layer 0, head 1",
        "layer 2, head 3",
    ]
    (maps,) = [f for f in figures(at)[1:] if len(f["layout"].get("annotations", [])) == 3]  # one figure, in rows
    assert [a["text"] for a in maps["layout"]["annotations"]] == [
        "layer 1, head 2",
        "layer 0, head 1",
        "layer 2, head 3",
    ]
    assert sum(bool(t.get("showscale")) for t in maps["data"] if t["type"] == "heatmap") == 1  # one colour bar
    assert maps["layout"]["width"] <= 820
    at.segmented_control(key="yours_hf_panel_view").set_value("Word links and gold").run()
    at.segmented_control(key="yours_hf_panel_method").set_value("dtw").run()
    assert not at.exception and not at.error
    table = at.dataframe[0].value
    shown = ["layer 1, head 2", "layer 0, head 1", "layer 2, head 3"]
    assert list(table["aligner"]) == [*shown, "DTW over the maps shown"]
    assert all(0 <= v <= 1 for v in table["AER"]) and set(table["sure links"]) == {7}


def test_folders_that_are_not_models_are_refused_and_a_zip_is_asked_for(tmp_path):
    at = page()
    at.text_input(key="yours_hf_path").set_value(str(tmp_path)).run()
    assert "holds no config" in at.error[0].value
    (tmp_path / "config.json").write_text('{"model_type": "gpt2"}', encoding="utf-8")
    at.text_input(key="yours_hf_path").set_value(str(tmp_path) + "/").run()
    assert "which is not an encoder" in at.error[0].value and not at.exception
    at.segmented_control(key="yours_hf_how").set_value("Upload a zip").run()
    assert not at.exception and any("Upload a zip" in i.value for i in at.info)


def test_compared_with_an_attnviz_model_forced_through_the_same_reference(folder):
    at = _open(page(), folder, "le chat noir .")
    at.text_input(key="yours_hf_text").set_value("the black cat .").run()
    at.selectbox(key="yours_hf_attnviz").set_value("toy-fr-general-luong").run()
    assert not at.exception and not at.error
    assert at.multiselect(key="yours_hf_panel_matrix").value == ["all layers and heads", "attnviz toy-fr-general-luong"]
    titles = [a["text"] for f in figures(at)[1:] for a in f["layout"].get("annotations", [])]
    assert any("toy-fr-general-luong" in t for t in titles)  # a map beside the heads


def test_every_head_ranked_on_uploaded_gold_files_and_the_best_opened(folder):
    at = _open(page(), folder)
    at.toggle(key="yours_hf_rank").set_value(True).run()
    at.segmented_control(key="yours_hf_rank_against").set_value("gold").run()
    at.file_uploader(key="yours_hf_rank_src").set_value(("src.txt", f"{SENTENCES[0]}\n".encode(), "text/plain"))
    at.file_uploader(key="yours_hf_rank_tgt").set_value(("tgt.txt", f"{SENTENCES[1]}\n".encode(), "text/plain"))
    at.file_uploader(key="yours_hf_rank_gold").set_value(("gold.txt", f"{GOLD}\n".encode(), "text/plain")).run()
    assert not at.exception and not at.error
    assert any(c.value.startswith(r"Auto\-detect\: pharaoh") for c in at.caption)  # the shared convention widget
    at.radio(key="yours_hf_rank_format").set_value("naacl").run()  # a Pharaoh file read as NAACL: one message
    assert not at.exception and len(at.error) == 1 and "it holds Pharaoh links" in at.error[0].value
    at.radio(key="yours_hf_rank_format").set_value("pharaoh").run()
    at.radio(key="yours_hf_rank_base").set_value(0).run()
    assert not at.exception and not at.error
    table = at.dataframe[0].value  # the ranking (AppTest finds no dataframe by key)
    assert len(table) == 1 + 3 + 12 and list(table["AER"]) == sorted(table["AER"])
    best = table["attention"][0]
    at.button(key="yours_hf_rank_open").click().run()
    layer, head = at.selectbox(key="yours_hf_layer").value, at.selectbox(key="yours_hf_head").value
    assert best == (
        "all layers and heads" if layer == "all" else f"layer {layer}" + ("" if head == "all" else f", head {head}")
    )


def test_a_folder_outside_the_allowed_ones_is_refused_without_saying_whether_it_exists():
    at = page()
    messages = []
    for path in ("/root", "/no/such/folder", "/etc/../root"):
        at.text_input(key="yours_hf_path").set_value(path).run()
        assert not at.exception
        messages.append(at.error[0].value)
    assert len(set(messages)) == 1 and "inside" in messages[0] and "ATTNVIZ\\_HF\\_FOLDERS" in messages[0]


def test_a_url_is_told_that_nothing_is_downloaded():
    at = page()
    at.text_input(key="yours_hf_path").set_value("https://huggingface.co/Helsinki-NLP/opus-mt-en-de").run()
    assert not at.exception and len(at.error) == 1
    assert "is a URL" in at.error[0].value and "downloads nothing" in at.error[0].value


def _pairs() -> tuple[str, bytes, str]:
    lines = [f"{s} ||| {t}" for s, t in zip(SENTENCES[::2], SENTENCES[1::2], strict=True)]
    return "pairs.txt", "\n".join(lines).encode(), "text/plain"


def test_every_head_ranked_against_eflomal_without_gold_then_with_gold(folder, monkeypatch):
    from attnviz.external import silver_links
    from attnviz_app.app_pages.yours import hf_rank

    calls = []  # eflomal's sampler is not seeded: its links are found once per model and pairs

    def counted(*args, **kwargs):
        calls.append(args)
        return silver_links(*args, **kwargs)

    monkeypatch.setattr(hf_rank, "silver_links", counted)
    at = _open(page(), folder)
    at.toggle(key="yours_hf_rank").set_value(True).run()
    assert at.segmented_control(key="yours_hf_rank_against").value == "silver" and at.info
    at.file_uploader(key="yours_hf_rank_src").set_value(_pairs()).run()
    assert not at.exception and not at.error
    table = at.dataframe[0].value
    assert list(table.columns) == ["attention", "silver AER", "aligns"] and len(table) == 12
    assert list(table["silver AER"]) == sorted(table["silver AER"])
    said = next(m.value for m in at.markdown if m.value.startswith("Heads that align"))
    aligning = list(table["attention"][table["aligns"]])
    assert all(name in said for name in aligning) and "median" in said
    at.button(key="yours_hf_silver_open").click().run()
    layer, head = at.selectbox(key="yours_hf_layer").value, at.selectbox(key="yours_hf_head").value
    assert table["attention"][0] == f"layer {layer}, head {head}"
    at.number_input(key="yours_hf_rank_margin").set_value(0.0).run()  # every head at or below the median aligns
    aligning = list(at.dataframe[0].value.query("aligns")["attention"])
    assert len(aligning) >= 6
    assert at.dataframe[0].value.equals(table.assign(aligns=at.dataframe[0].value["aligns"]))  # same silver AERs
    at.segmented_control(key="yours_hf_rank_method").set_value("threshold").run()
    assert at.number_input(key="yours_hf_rank_threshold").value == 0.3  # the threshold is shown, and can be set
    assert any(r"threshold links \(0\.3\) on words" in c.value for c in at.caption)
    at.number_input(key="yours_hf_rank_threshold").set_value(0.1).run()
    assert any(r"threshold links \(0\.1\) on words" in c.value for c in at.caption)
    at.segmented_control(key="yours_hf_rank_method").set_value("argmax").run()
    assert len(calls) <= 1  # margin, method and threshold rank the same heads against the same links
    at.button(key="yours_hf_silver_compare").click().run()
    layer, head = at.selectbox(key="yours_hf_layer").value, at.selectbox(key="yours_hf_head").value
    assert f"layer {layer}, head {head}" == aligning[0]
    assert at.text_input(key="yours_hf_compare").value == " ".join(
        name.replace("layer ", "").replace(", head ", ":") for name in aligning[1:4]
    )
    at.toggle(key="yours_hf_markup").set_value(True).run()  # the aligning heads, averaged, carry markup
    choices = at.selectbox(key="yours_hf_markup_pick").options
    assert any(c.startswith("the heads that align") for c in choices)
    at.selectbox(key="yours_hf_markup_pick").set_value(choices[-1]).run()
    assert not at.exception and not at.error and "heads" in figures(at)[-1]["layout"]["title"]["text"]
    gold = "\n".join(
        ["0-0 1-2 2-1 3-3 4-4 5-5 6-6", "0-0 1-1 2-2 3-4 4-3 5-5 6-6 6-7 7-8 8-9", "0-0 1-1 2-2 3-3 4-4 5-5 6-6 7-7"]
    )
    at.file_uploader(key="yours_hf_rank_gold").set_value(("gold.txt", gold.encode(), "text/plain")).run()
    assert not at.exception and not at.error
    table = at.dataframe[0].value
    assert list(table.columns) == ["attention", "silver AER", "gold AER", "aligns"]
    assert all(0 <= v <= 1 for v in table["gold AER"])
    assert any(c.value.startswith("Spearman") for c in at.caption)


def test_markup_carried_through_the_chosen_heads_shown_as_text(folder):
    at = _open(page(), folder)
    at.toggle(key="yours_hf_markup").set_value(True).run()
    assert not at.exception and not at.error
    assert at.text_area(key="yours_hf_markup_text").value == "the <b>black</b> cat eats the apple ."
    assert at.selectbox(key="yours_hf_markup_pick").options == ["all layers and heads"]
    assert at.dataframe[-1].value["element"][0] == "<b>"
    assert "<b>" in at.code[-1].value and "</b>" in at.code[-1].value  # shown as text, never rendered
    at.selectbox(key="yours_hf_layer").set_value(2).run()
    at.selectbox(key="yours_hf_head").set_value(1).run()
    at.selectbox(key="yours_hf_markup_pick").set_value("layer 2, head 1").run()
    assert not at.exception and not at.error
    assert "layer 2, head 1" in figures(at)[-1]["layout"]["title"]["text"]
    at.text_area(key="yours_hf_markup_text").set_value("the <b>black <i>cat</b></i> eats").run()
    assert not at.exception and at.error  # crossing tags: a message, never a rendered tag
