"""AppTest for the Compare, Train, Evaluate and Learn pages (the Data page: test_data_page.py), on tiny
models trained here: a model another session trained on its upload shows none of that upload on Compare;
trainings a killed server left unfinished are offered on the Train page, kept or discarded there."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import time
from pathlib import Path

import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from attnviz.devices import available_devices
from attnviz.store import catalog
from attnviz.training.recipes import Recipe, run_recipe
from tests.support.jobs import stranded_run, tiny_recipe
from tests.support.paths import APP

TINY = {"emb_dim": 16, "hidden_dim": 16, "attn_dim": 8, "dropout": 0.0}
DATA = {"n_train": 200, "n_valid": 20, "n_test": 20}


@pytest.fixture(scope="module", autouse=True)
def models_dir(tmp_path_factory):
    """Three toy-fr models (the Compare defaults) and a Transformer-encoder one, in a tmp folder;
    the shipped models are hidden so the pages see only these."""
    folder = tmp_path_factory.mktemp("models")
    kinds = [
        ("additive", "bahdanau", {}),
        ("general", "luong", {}),
        ("dot", "luong", {}),
        ("general", "luong", {"encoder": "transformer", "heads": 2}),
    ]
    for score, style, extra in kinds:
        name = f"toyfr-{score}-{style}" + ("-tf" if extra else "")
        model = {**TINY, "score": score, "style": style, **extra}
        recipe = Recipe(name, "toy-fr", DATA, model=model, train={"epochs": 1, "batch_size": 32})
        run_recipe(recipe, folder / f"{name}.safetensors")
    old = {k: os.environ.get(k) for k in ("ATTNVIZ_MODELS", "ATTNVIZ_PRETRAINED")}
    os.environ["ATTNVIZ_MODELS"] = str(folder)
    os.environ["ATTNVIZ_PRETRAINED"] = str(folder / "no-pretrained")
    st.cache_data.clear()
    yield folder
    for key, value in old.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    st.cache_data.clear()


def page(name: str) -> AppTest:
    """The app opened on page ``name`` (a file under attnviz_app/app_pages/), through app.py's navigation."""
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page(f"attnviz_app/app_pages/{name}").run()
    assert not at.exception, at.exception
    return at


def figures(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def test_compare_opens_on_explores_models_in_a_grid_on_one_scale_and_gold_aer():
    at = page("compare.py")
    chosen = at.multiselect(key="cmp_models").value
    assert at.session_state["explore_models"][0] in chosen and len(chosen) >= 2  # Explore's model first
    at.multiselect(key="cmp_models").set_value(["toyfr-additive-bahdanau", "toyfr-general-luong", "toyfr-dot-luong"])
    at.run()
    maps = [f for f in figures(at) if any(d["type"] == "heatmap" for d in f["data"])][:3]
    heat = [next(d for d in f["data"] if d["type"] == "heatmap") for f in maps]
    assert len(heat) == 3 and len({(d["zmin"], d["zmax"]) for d in heat}) == 1  # one scale
    assert all(f["layout"]["width"] <= 394 for f in maps)  # each fits its grid cell
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels.count("HTML") == 1  # the grid as one paper figure
    assert {"Every map's weights (CSV)", "Difference (CSV)"} <= set(labels)  # the maps' numbers, not only hover
    at.toggle(key="cmp_use_pair").set_value(True).run()
    assert not at.exception
    titles = [f["layout"].get("title", {}).get("text", "") for f in figures(at)]
    assert any("Gold alignment" in t for t in titles) and any("Jensen-Shannon" in t for t in titles)
    aer = at.dataframe[-1].value
    assert list(aer["model"]) == at.multiselect(key="cmp_models").value
    assert aer["AER"].between(0, 1).all()
    # each row is its own model's attention forced through the pair's reference, scored against the pair's gold
    from attnviz.data import load_corpus
    from attnviz.evaluation import aer_rows
    from attnviz.evaluation.evaluate import measured_on
    from attnviz.store import catalog

    spec, options = measured_on(catalog.load(aer["model"][0]).meta)
    pair = load_corpus(spec, **options, split="test").test[0]  # the first test pair, the page's default
    own = {name: catalog.load(name).align(pair.source, pair.target) for name in aer["model"]}
    expected = aer_rows(own, pair)
    assert aer.to_dict("records") == expected
    assert len({row["AER"] for row in expected}) > 1  # the models differ, so a row scored on another model's map shows


def test_compares_translations_name_each_model_whole():
    at = page("compare.py")
    at.multiselect(key="cmp_models").set_value(["toyfr-additive-bahdanau", "toyfr-general-luong"]).run()
    table = at.table[0].value  # a static table: whole names and translations, wrapped, never cut
    assert list(table["model"]) == ["toyfr\\-additive\\-bahdanau", "toyfr\\-general\\-luong"]  # read as Markdown
    assert all(isinstance(text, str) for text in table["model's own translation"])
    from attnviz.store import catalog

    sentence = at.text_input(key="cmp_sentence").value
    own = []
    for name in ("toyfr-additive-bahdanau", "toyfr-general-luong"):
        model = catalog.load(name)
        own.append(model.text_of(model.translate(sentence)).replace(".", "\\.").replace("-", "\\-"))
    assert list(table["model's own translation"]) == own  # each model's own translation
    assert own[0] != own[1]  # the two models translate differently, so a row showing the other's would show


def test_the_paper_figures_images_are_drawn_only_when_asked_for(monkeypatch):
    from attnviz.plots import images

    def draw(*_):
        raise AssertionError("a rerun drew an image")

    monkeypatch.setattr(images, "_draw", draw)
    at = page("compare.py")
    at.radio(key="cmp_values").set_value("scores").run()  # a rerun with another figure
    assert not at.exception, at.exception
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels.count("HTML") == 1 and (labels.count("PNG") == 1) == images.can_write_images()


def test_learn_worked_example_and_parameters():
    at = page("learn.py")
    assert any("= 12" in line.value for line in at.latex)  # dot([3, 1], [2, 6])
    assert at.dataframe[0].value["score"].tolist() == [12, 3, 2]
    at.selectbox(key="learn_model").set_value("toyfr-general-luong-tf").run()
    assert not at.exception
    assert any(f["data"][0]["type"] == "heatmap" for f in figures(at))  # encoder self-attention
    assert at.dataframe[-1].value["count"].sum() > 0
    at.text_input(key="learn_query").set_value("three, one").run()
    assert not at.exception and "not a list of numbers" in at.error[0].value


def test_evaluate_leaderboard(models_dir):
    at = page("evaluate.py")
    stored = at.dataframe[0].value
    # numbers stay numbers (a header click sorts them as numbers), "–" is the table's placeholder
    assert len(stored) == 4 and stored["bleu"].between(0, 100).all() and stored["params"].gt(0).all()
    assert pd.api.types.is_float_dtype(stored["bleu"]) and pd.api.types.is_numeric_dtype(stored["params"])
    assert any("another seed" in c.value and "tie" in c.value for c in at.caption)  # how large a gap means anything
    at.number_input(key="eval_n").set_value(10)
    at.button(key="eval_go").click().run()
    assert not at.exception
    sample = at.dataframe[-1].value
    assert sample["n"].eq(10).all() and sample["aer"].between(0, 1).all()
    assert at.download_button(key="leaderboard_sample_csv") is not None


def test_train_form_name_and_probe_follow_the_task_until_edited(models_dir):
    at = page("train/train.py")
    at.selectbox(key="train_task").set_value("dates").run()
    assert at.text_input(key="train_probe").value == "saturday 22nd of november 2026"
    assert at.text_input(key="train_name").value.startswith("dates-additive-")
    assert at.number_input(key="train_subwords").disabled  # built-in tasks keep their tokens and gold links
    at.text_input(key="train_name").set_value("my model").run()
    at.selectbox(key="train_task").set_value("reverse").run()
    assert at.text_input(key="train_probe").value == "a b c d e"  # followed the task
    assert at.text_input(key="train_name").value == "my model"  # the user's edit is kept


def test_train_a_tiny_model_to_completion(models_dir):
    at = page("train/train.py")
    at.selectbox(key="train_task").set_value("reverse")
    for key, value in (("train_n", 100), ("train_epochs", 2), ("train_emb", 16), ("train_hidden", 16)):
        at.number_input(key=key).set_value(value)
    at.text_input(key="train_name").set_value("page trained")
    at.button(key="train_start").click().run()
    assert not at.exception and not at.error
    deadline = time.monotonic() + 60
    while not at.success and time.monotonic() < deadline:
        time.sleep(0.3)
        at.run()  # AppTest never fires run_every: poll by rerunning
    assert not at.exception
    assert at.success and "page-trained.safetensors" in at.success[0].value.replace("\\", "")
    assert (models_dir / "page-trained.safetensors").is_file()
    at.run()  # the panel may have been drawn just before the job ended
    assert len(at.get("plotly_chart")) >= 3  # curves, the replay of the alignment history and the probe's heatmap
    replay = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if json.loads(c.proto.spec).get("frames")]
    assert replay and replay[0]["frames"][0]["layout"]["title"]["text"].startswith("untrained")
    assert at.download_button(key="train_history_html") is not None
    (models_dir / "page-trained.safetensors").unlink()  # the module's folder holds its four models again
    st.cache_data.clear()


def test_train_name_follows_score_and_style_is_never_blank_and_the_form_survives_a_page_change(models_dir):
    at = page("train/train.py")
    at.selectbox(key="train_score").set_value("dot").run()
    at.radio(key="train_style").set_value("luong").run()
    assert at.text_input(key="train_name").value == "toy-fr-dot-luong"
    at.text_input(key="train_name").set_value("").run()
    assert at.text_input(key="train_name").value == "toy-fr-dot-luong"  # a blank name gets the default back
    at.number_input(key="train_epochs").set_value(7).run()
    at.switch_page("attnviz_app/app_pages/explore/explore.py").run()
    at.switch_page("attnviz_app/app_pages/train/train.py").run()
    assert at.selectbox(key="train_score").value == "dot" and at.radio(key="train_style").value == "luong"
    assert at.number_input(key="train_epochs").value == 7 and at.text_input(key="train_name").value.endswith("-luong")
    assert at.selectbox(key="train_score").set_value("local_m").run().text_input(key="train_name").value == (
        "toy-fr-local-m-luong"  # spelled as the shipped models are
    )


def test_evaluate_a_subset_with_charts_and_dashes_for_what_does_not_apply(models_dir):
    at = page("evaluate.py")
    at.multiselect(key="eval_models").set_value(["toyfr-dot-luong"])
    at.number_input(key="eval_n").set_value(10)
    at.button(key="eval_go").click().run()
    assert not at.exception
    assert len(at.dataframe[-1].value) == 1
    titles = [f["layout"]["title"]["text"] for f in figures(at)]
    assert any("AER" in t for t in titles) and any("entropy" in t for t in titles)


def test_evaluate_measures_on_the_device_chosen(models_dir, monkeypatch):
    from attnviz import evaluation

    asked, measure = [], evaluation.evaluate_checkpoints

    def spy(*args, **kwargs):
        asked.append(kwargs.get("device"))
        return measure(*args, **kwargs)

    monkeypatch.setattr(evaluation, "evaluate_checkpoints", spy)
    at = page("evaluate.py")
    device = at.selectbox(key="eval_device")
    assert device.options == available_devices()
    if device.disabled:  # the CPU is the only choice
        assert device.options == ["cpu"] and device.value == "cpu"
    else:  # the first GPU is the default
        assert device.value == available_devices()[1]
        device.set_value("cpu")
    at.multiselect(key="eval_models").set_value(["toyfr-dot-luong"])
    at.number_input(key="eval_n").set_value(10)
    at.button(key="eval_go").click().run()
    assert not at.exception and asked == ["cpu"]
    sample = at.dataframe[-1].value
    assert list(sample["model"]) == ["toyfr-dot-luong"] and sample["n"].eq(10).all()


# models named like spreadsheet formulas ("/" cannot be in a file name)
FORMULA_NAMES = ['=HYPERLINK("evil.example")', "+1", "-1", "@SUM(1)"]


@pytest.fixture
def formula_models(models_dir, tmp_path, monkeypatch):
    """A models folder holding one tiny model under each of ``FORMULA_NAMES``; the app lists only these."""
    for name in FORMULA_NAMES:
        shutil.copyfile(models_dir / "toyfr-dot-luong.safetensors", tmp_path / f"{name}.safetensors")
    monkeypatch.setenv("ATTNVIZ_MODELS", str(tmp_path))
    st.cache_data.clear()
    yield tmp_path
    st.cache_data.clear()


def downloaded_csv(at: AppTest, media: dict, key: str) -> list[list[str]]:
    """The rows of the CSV that download button ``key`` sends."""
    data, _ = media[Path(at.download_button(key=key).proto.url).stem]
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))  # a BOM starts every CSV


def test_evaluate_csv_downloads_neutralise_model_names_a_spreadsheet_would_run(formula_models, media):
    at = page("evaluate.py")
    header, *rows = downloaded_csv(at, media, "leaderboard_stored_csv")
    quoted = sorted("'" + name for name in FORMULA_NAMES)
    assert header[0] == "model" and sorted(row[0] for row in rows) == quoted
    at.multiselect(key="eval_models").set_value(FORMULA_NAMES)
    at.number_input(key="eval_n").set_value(10)
    at.button(key="eval_go").click().run()
    assert not at.exception and not at.warning  # every model was measured
    header, *rows = downloaded_csv(at, media, "leaderboard_sample_csv")
    assert sorted(row[header.index("model")] for row in rows) == quoted
    assert all(0 <= float(row[header.index("aer")]) <= 1 for row in rows)  # numbers stay numbers


def test_evaluate_shows_attention_against_attributions(tmp_path, monkeypatch):
    from attnviz.evaluation import leaderboard

    figures = {"aer": {"attention": 0.05, "ig": 0.3}, "spearman": {"ig": 0.2}, "top1": {"ig": 0.6}}
    results = {"models": {"toy-fr-dot-luong": {"task": "toy-fr", "pairs": 100, **figures}}}
    path = tmp_path / "attribution_aer.json"
    path.write_text(json.dumps(results), encoding="utf-8")
    model = {"model": "toy-fr-dot-luong", "task": "toy-fr", "pairs": 100}
    row = {**model, "AER attention": 0.05, "AER ig": 0.3, "Spearman ig": 0.2, "top-1 ig": 0.6}
    assert leaderboard.attribution_records(path) == [row]
    monkeypatch.setattr(leaderboard, "attribution_results_path", lambda: path)
    at = page("evaluate.py")
    assert any("Does attention explain" in s.value for s in at.header)


def test_compare_offers_the_pairs_of_this_sessions_upload(tmp_path):
    table = tmp_path / "mine.csv"
    pairs = "".join(f"the cat eats the apple {k} .,le chat mange la pomme {k} .\n" for k in range(30))
    table.write_text("en,fr\n" + pairs, encoding="utf-8")
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["upload_spec"] = (f"{table}?src=en&tgt=fr", "mine.csv")
    at.run()
    at.switch_page("attnviz_app/app_pages/compare.py").run()
    assert not at.exception
    at.toggle(key="cmp_use_upload").set_value(True).run()
    assert not at.exception
    assert any("the cat eats the apple" in m.value for m in at.markdown)  # the pair's source is shown


SECRET, GEHEIM = "secret", "geheim"


@pytest.fixture
def private_models(app_models_dir, tmp_path, monkeypatch):
    """The tiny app models plus ``private``: trained by another session on its upload."""
    folder = tmp_path / "models"
    shutil.copytree(app_models_dir, folder)
    upload = tmp_path / "upload.tsv"
    upload.write_text("en\tde\n" + "".join(f"{SECRET} {i} row\t{GEHEIM} {i}\n" for i in range(60)), encoding="utf-8")
    recipe = Recipe(**{**tiny_recipe("private", epochs=1).to_dict(), "data": f"{upload}?src=en&tgt=de"})
    run_recipe(recipe, folder / "private.safetensors", meta={"owner": "owner-session"})
    monkeypatch.setenv("ATTNVIZ_MODELS", str(folder))
    monkeypatch.setenv("ATTNVIZ_PRETRAINED", str(tmp_path / "no-pretrained"))
    st.cache_data.clear()
    yield upload
    st.cache_data.clear()  # the catalog cached for this folder (5 s, keyed by the session only) must not outlive it


def shown_text(at: AppTest) -> str:
    """Every value the page shows or holds in a widget, as one string."""
    parts = []
    for kind in ("markdown", "caption", "text", "info", "warning", "error", "code", "text_input", "toggle"):
        for element in getattr(at, kind):
            parts.append(str(getattr(element, "value", "")) + str(getattr(element, "label", "")))
    return "\n".join(parts)


def test_no_page_lists_a_model_another_session_trained_on_its_upload(private_models):
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception, at.exception
    at.switch_page("attnviz_app/app_pages/compare.py").run()
    assert not at.exception, at.exception
    assert "private" not in [o.split(" · ")[0] for o in at.multiselect(key="cmp_models").options]
    for page, key in (
        ("attnviz_app/app_pages/evaluate.py", "eval_models"),
        ("attnviz_app/app_pages/learn.py", "learn_model"),
    ):
        at.switch_page(page).run()
        assert not at.exception, at.exception
        widget = at.multiselect(key=key) if key == "eval_models" else at.selectbox(key=key)
        assert "private" not in widget.options, page
        text = shown_text(at)
        assert SECRET not in text and GEHEIM not in text and str(private_models) not in text


@pytest.fixture
def stranded_models(app_models_dir, tmp_path, monkeypatch):
    """The tiny app models and two trainings a killed server left after their first epoch."""
    folder = tmp_path / "models"
    shutil.copytree(app_models_dir, folder)
    monkeypatch.setenv("ATTNVIZ_MODELS", str(folder))
    monkeypatch.setenv("ATTNVIZ_PRETRAINED", str(tmp_path / "no-pretrained"))
    st.cache_data.clear()
    for name in ("cut", "gone"):
        stranded_run(folder, name)
    yield folder
    st.cache_data.clear()  # as private_models


def test_the_train_page_offers_unfinished_runs_and_keeps_or_discards_them(stranded_models):
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("attnviz_app/app_pages/train/train.py").run()
    assert not at.exception, at.exception
    assert any("2 unfinished training(s)" in e.label for e in at.expander)
    assert any("1 of 3 epochs done" in m.value for m in at.markdown)
    at.button(key="train_keep_cut").click().run()
    assert not at.exception, at.exception
    assert (stranded_models / "cut.safetensors").is_file()
    assert any("whoever started it, here or in another browser, loses it too" in m.value for m in at.markdown)
    at.button(key="train_discard_gone").click().run()  # the popover's "Discard for good"
    assert not at.exception, at.exception
    assert not any("unfinished training" in e.label for e in at.expander)
    assert "cut" in [m.name for m in catalog.list_models()]
