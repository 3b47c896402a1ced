"""Explore's word reading and Alignment view (AppTest, tiny models): pieces merged into words, links from
attention and eflomal, gold links built in and uploaded."""

from __future__ import annotations

import base64
import json
import random
import re

import numpy as np
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from attnviz.training.recipes import Recipe, run_recipe
from tests.support.app import TEXT, start  # the app opened with session state

REFERENCE = "la fille voit le chat ."  # the tiny models' own translations may be empty
COMPOUND = "Das Hausgarten ist groß."


def specs(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def unescape(markdown: str) -> str:
    """The text Markdown shows: escapes undone, the word joiners that keep links from forming dropped."""
    return re.sub(r"\\(.)", r"\1", markdown).replace("\u2060", "")


def heatmap(spec: dict) -> dict:
    return next(d for d in spec["data"] if d["type"] == "heatmap")


def z_of(spec: dict) -> np.ndarray:
    z = heatmap(spec)["z"]
    if isinstance(z, dict):  # a typed array: {"dtype", "bdata", "shape"}
        flat = np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"])
        return flat.reshape([int(n) for n in str(z["shape"]).split(",")])
    return np.asarray(z, dtype=float)


@pytest.fixture(scope="module")
def subword_env(tmp_path_factory):
    """A folder holding one tiny model whose source is cut into BPE pieces; the app lists only it."""
    folder = tmp_path_factory.mktemp("subword_models")
    rng = random.Random(1)
    stems = ["haus", "garten", "tür", "hund", "katze", "baum"]
    rows = ["de\ten"]
    for _ in range(120):
        a, b = rng.sample(stems, 2)
        rows.append(f"Das {a}{b} ist groß.\tThe {b} {a} is big.")
    (folder / "pairs.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (folder / "models").mkdir()
    for name in ("bpe-additive-bahdanau", "bpe-copy-additive-bahdanau"):  # two, for Compare
        data, options = f"{folder / 'pairs.tsv'}?src=de&tgt=en", {"n_valid": 5, "n_test": 5, "subwords": 20}
        model = {"emb_dim": 16, "hidden_dim": 24, "attn_dim": 12, "dropout": 0.0}
        recipe = Recipe(name, data, options, model=model, train={"epochs": 1, "batch_size": 16})
        run_recipe(recipe, folder / "models" / f"{name}.safetensors")
    return folder / "models"


@pytest.fixture
def subword_app(subword_env, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("ATTNVIZ_MODELS", str(subword_env))
    monkeypatch.setenv("ATTNVIZ_PRETRAINED", str(tmp_path / "no-pretrained"))
    st.cache_data.clear()


def test_merging_pieces_relabels_the_heatmap_and_keeps_rows_distributions(subword_app):
    at = start(explore_text=COMPOUND)
    assert not at.exception, at.exception
    assert at.toggle(key="explore_merge").label == "Merge subword pieces into words"
    pieces = specs(at)[0]["layout"]["xaxis"]["ticktext"]
    assert any(t.endswith("@@") for t in pieces)
    at.toggle(key="explore_merge").set_value(True).run()
    assert not at.exception, at.exception
    fig = specs(at)[0]
    words = fig["layout"]["xaxis"]["ticktext"]
    assert not any(t.endswith("@@") for t in words) and len(words) < len(pieces)
    assert "pieces merged into words" in fig["layout"]["title"]["text"].replace("<br>", " ")
    np.testing.assert_allclose(z_of(fig).sum(axis=1), 1.0, atol=1e-5)
    assert any("columns summed" in c.value for c in at.caption)  # the rule, stated on the page
    assert any("no single score to recompute" in i.value for i in at.info)  # a word's cell has no numbers
    at.toggle(key="explore_eos").set_value(True).run()  # both options: still distributions, <eos> gone
    fig = specs(at)[0]
    assert "&lt;eos&gt;" not in fig["layout"]["xaxis"]["ticktext"]
    rows = z_of(fig).sum(axis=1)
    assert np.all((np.abs(rows - 1) < 1e-5) | (rows == 0))


def test_compare_merges_pieces_too(subword_app):
    at = start(explore_text=COMPOUND)
    at.switch_page("attnviz_app/app_pages/compare.py").run()
    assert not at.exception, at.exception
    assert len(at.multiselect(key="cmp_models").value) == 2
    at.toggle(key="cmp_merge").set_value(True).run()
    assert not at.exception, at.exception
    title = lambda s: (s["layout"].get("title") or {}).get("text", "").replace("<br>", " ")  # noqa: E731
    maps = [s for s in specs(at) if "pieces merged into words" in title(s)]
    assert len(maps) == 2 and not any(t.endswith("@@") for t in maps[0]["layout"]["xaxis"]["ticktext"])
    assert any("columns summed" in c.value for c in at.caption)


def test_hiding_eos_is_labelled_and_renormalises_in_explore_and_compare(app_env):
    title = lambda s: (s["layout"].get("title") or {}).get("text", "").replace("<br>", " ")  # noqa: E731
    at = start(explore_text=TEXT)
    assert "&lt;eos&gt;" in specs(at)[0]["layout"]["xaxis"]["ticktext"]
    at.toggle(key="explore_eos").set_value(True).run()
    assert not at.exception, at.exception
    fig = specs(at)[0]
    assert "&lt;eos&gt;" not in fig["layout"]["xaxis"]["ticktext"]
    assert "<eos> hidden" in title(fig).replace("&lt;", "<").replace("&gt;", ">")
    rows = z_of(fig).sum(axis=1)
    assert np.all((np.abs(rows - 1) < 1e-5) | (rows == 0))
    at.switch_page("attnviz_app/app_pages/compare.py").run()
    assert not at.exception, at.exception
    at.radio(key="cmp_target_of_free").set_value("reference").run()  # the tiny models may translate to nothing
    at.text_input(key="cmp_reference").input(REFERENCE).run()
    at.toggle(key="cmp_eos").set_value(True).run()
    assert not at.exception, at.exception
    maps = [s for s in specs(at) if "hidden" in title(s)]
    assert len(maps) >= 2
    for fig in maps:
        assert "&lt;eos&gt;" not in fig["layout"]["xaxis"]["ticktext"]
        rows = z_of(fig).sum(axis=1)
        assert np.all((np.abs(rows - 1) < 1e-5) | (rows == 0))


def test_a_model_without_pieces_has_no_merge_toggle(app_env):
    at = start(explore_text=TEXT)
    assert not at.exception
    assert "explore_merge" not in [t.key for t in at.toggle]
    assert "explore_eos" in [t.key for t in at.toggle]


def test_alignment_view_shows_attention_and_eflomal_links_for_toy_fr(app_env):
    at = start(explore_text=TEXT, explore_view="Alignment", explore_align_reference=REFERENCE)
    assert not at.exception, at.exception
    fig = specs(at)[0]
    assert fig["layout"]["yaxis"]["ticktext"] == REFERENCE.split()
    layers = {d["name"]: d for d in fig["data"] if d["type"] == "scatter"}
    n_tgt = len(fig["layout"]["yaxis"]["ticktext"])
    assert len(layers["attention (argmax)"]["x"]) == n_tgt  # one argmax link per target word
    assert "eflomal" in layers
    assert fig["layout"]["legend"]["y"] >= 1.0 and fig["layout"]["legend"]["yanchor"] == "bottom"  # above the plot
    codes = [c.value for c in at.code]
    assert codes and all(c == "(no links)" or c[0].isdigit() for c in codes)
    assert any("eflomal" in c.value and "training pairs" in c.value for c in at.caption)
    assert {d.key for d in at.get("download_button")} >= {"explore_align_dl_attention", "explore_align_dl_eflomal"}
    assert any("argmax, threshold, dtw only" in c.value for c in at.caption)  # as the control offers
    at.segmented_control(key="explore_align_method").set_value("threshold").run()
    assert not at.exception
    assert at.slider(key="explore_align_threshold").value == 0.3
    # no reverse model of toy-fr: the symmetric methods are not offered
    assert "grow-diag-final" not in at.segmented_control(key="explore_align_method").options


def test_built_in_gold_scores_attention_and_eflomal(app_env):
    at = start(explore_text=TEXT, explore_view="Alignment", explore_align_part="gold")
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert list(table["aligner"]) == ["attention (argmax)", "eflomal"]
    assert table["AER"].between(0, 1).all() and table["links"].gt(0).all()
    fig = specs(at)[0]
    names = {d["name"] for d in fig["data"] if d["type"] == "scatter"}
    assert "gold sure" in names and names & {"hit: predicted, in gold", "wrong: predicted, not in gold"}
    at.number_input(key="explore_gold_pair").set_value(3).run()
    assert not at.exception and "pair 3" in specs(at)[0]["layout"]["title"]["text"]


def _upload(at: AppTest, gold: bytes, name: str = "gold.txt") -> AppTest:
    at.radio(key="explore_gold_source").set_value("upload").run()
    source_file = ("src.txt", b"the girl sees the cat .\nthe cat eats .\n", "text/plain")
    target_file = ("tgt.txt", b"la fille voit le chat .\nle chat mange .\n", "text/plain")
    at.file_uploader(key="explore_gold_src_file").set_value(source_file)
    at.file_uploader(key="explore_gold_tgt_file").set_value(target_file)
    at.file_uploader(key="explore_gold_file").set_value((name, gold, "text/plain"))
    return at.run()


def test_an_uploaded_gold_file_is_scored_and_a_malformed_one_names_its_line(app_env):
    at = start(explore_text=TEXT, explore_view="Alignment", explore_align_part="gold")
    at = _upload(at, b"0-0 1-1 2-2 3-3 4-4 5-5\n0-0 1-1 2-2 3-3\n")
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert table["sure links"].tolist() == [10, 10] and table["AER"].between(0, 1).all()
    assert any(m.value.startswith(r"**gold\.txt**: 2 pairs") for m in at.markdown)

    at = _upload(at, b"0-0 1-1 2-x\n0-0\n", name="**evil**_[x](http://e).txt")
    assert not at.exception
    errors = [e.value for e in at.error]
    assert errors and r"\*\*evil\*\*\_\[x\]\(http" in errors[0]  # the file name shown literally
    assert "evil**_[x](http://e).txt line 1: '2-x' is not a gold link" in unescape(errors[0])
    assert not at.get("plotly_chart")

    at = _upload(at, b"0-0\n", name="short.txt")  # one line for two pairs
    assert "short.txt line 2: the file has 1 line but there are 2 sentence pairs" in unescape(at.error[0].value)

    at.file_uploader(key="explore_gold_src_file").set_value(("latin1.txt", b"caf\xe9\n", "text/plain")).run()
    assert not at.exception and len(at.error) == 1 and "latin1.txt: not UTF-8 text" in unescape(at.error[0].value)
    assert at.radio(key="explore_gold_format").value == "auto"  # the convention's radios stay on the page


def test_in_both_the_alignment_view_aligns_with_both_models_side_by_side(app_env):
    at = start(explore_style="both", explore_text=TEXT, explore_view="Alignment", explore_align_reference=REFERENCE)
    assert not at.exception, at.exception
    titles = [s["layout"]["title"]["text"] for s in specs(at)]
    assert len(titles) == 2 and "Bahdanau" in titles[0] and "Luong" in titles[1]
    assert "bahdanau" in titles[0] and "luong" in titles[1]  # each panel names its own model
    code_spans = [part for c in [*at.caption, *at.markdown] for part in c.value.split("`")[1::2]]
    assert not any("\\" in part for part in code_spans)  # an escaped name inside `code` shows its backslashes
    keys = [b.proto.id for b in at.get("download_button")]
    assert len(keys) >= 2  # each model's Pharaoh links


def test_in_both_gold_scores_each_model(app_env):
    at = start(explore_style="both", explore_text=TEXT, explore_view="Alignment", explore_align_part="gold")
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert list(table["aligner"])[:2] == ["Bahdanau attention (argmax)", "Luong attention (argmax)"]
    titles = [s["layout"]["title"]["text"] for s in specs(at)]
    assert len(titles) == 2 and titles[0].startswith("Bahdanau") and titles[1].startswith("Luong")


def test_a_character_model_gets_attention_links_but_no_word_yardsticks(app_env):
    at = start(explore_task="dates", explore_text="saturday 22nd of november 2026", explore_view="Alignment")
    assert not at.exception, at.exception
    assert [d["name"] for d in specs(at)[0]["data"] if d["type"] == "scatter"] == ["attention (argmax)"]
    assert any("this model reads characters" in c.value for c in at.caption)
    at.segmented_control(key="explore_align_part").set_value("gold").run()
    assert not at.exception and not at.error
    assert any("reads characters" in i.value for i in at.info)


def test_an_uploaded_talp_file_with_a_bitext_shows_the_convention_it_detected(app_env):
    at = start(explore_text=TEXT, explore_view="Alignment", explore_align_part="gold")
    at.radio(key="explore_gold_source").set_value("upload").run()
    bitext = b"the girl sees the cat .   ||| la fille voit le chat .  \nthe cat eats . ||| le chat mange .\n"
    at.file_uploader(key="explore_gold_src_file").set_value(("test.en-fr", bitext, "text/plain"))
    talp_file = ("enfr.talp", b"1-1 2-2 3-3 4-4 5-5 6-6\n1-1 2p2 3-3 4-4\n", "text/plain")
    at.file_uploader(key="explore_gold_file").set_value(talp_file)
    at.run()
    assert not at.exception and not at.error, at.error
    captions = [unescape(c.value) for c in at.caption]
    assert not any(c.startswith("Read as") for c in captions), captions  # auto-detect's caption says it once
    table = at.dataframe[0].value
    assert table["sure links"].tolist() == [9, 9] and table["pairs"].tolist() == [2, 2]

    detected = "Auto-detect: talp (one line a pair, i-j sure, ipj possible), 1-based (detected"
    assert any(c.startswith(detected) for c in captions), captions  # the shared widget's caption, under the radios

    at.radio(key="explore_gold_base").set_value(0).run()  # the base given, and wrong: the line is named
    assert len(at.error) == 1 and not at.get("plotly_chart")
    assert "enfr.talp line 1: link 6-6 has an index equal to its sentence's length" in unescape(at.error[0].value)
    assert any(unescape(c.value).startswith("Auto-detect: talp (") for c in at.caption)  # the fitting one stays shown
    at.radio(key="explore_gold_base").set_value(1).run()
    at.radio(key="explore_gold_format").set_value("talp").run()  # given and right: read as given
    read_as = "Read as talp (one line a pair, i-j sure, ipj possible), 1-based (given)"
    assert not at.error and any(unescape(c.value).startswith(read_as) for c in at.caption)
    at.radio(key="explore_gold_format").set_value("auto").run()
    at.radio(key="explore_gold_base").set_value("auto").run()
    at.file_uploader(key="explore_gold_file").set_value(("enfr.talp", b"1-1\n1-1 2:2\n", "text/plain")).run()
    assert "enfr.talp line 2: '2:2' is not a gold link" in unescape(at.error[0].value)


def test_gold_messages_name_the_page_controls_and_a_sure_only_file_both_notations(app_env):
    at = start(explore_text=TEXT, explore_view="Alignment", explore_align_part="gold")
    at = _upload(at, b"1-1 2-2\n1-1\n", name="enfr.talp")  # every index fits both bases; no possible link
    assert not at.exception and not at.error, at.error
    warnings = [unescape(w.value) for w in at.warning]
    assert any("Choose index base 1 if the file's first word is 1" in w for w in warnings), warnings
    captions = [unescape(c.value) for c in at.caption]
    both = "Auto-detect: pharaoh or talp (one line a pair, i-j sure; no possible link"  # not Pharaoh alone
    assert any(c.startswith(both) for c in captions), captions
    shown = " ".join(warnings + captions + [unescape(e.value) for e in [*at.info, *at.error]])
    assert "--base" not in shown and "--format" not in shown  # the command line's words stay out of the app


def test_each_methods_links_file_names_the_method(app_env, download_names):
    at = start(explore_text=TEXT, explore_view="Alignment", explore_align_reference=REFERENCE)
    argmax = download_names["Download attention's links"]
    at.segmented_control(key="explore_align_method").set_value("dtw").run()
    dtw = download_names["Download attention's links"]
    assert argmax.endswith("-attention-argmax-links.pharaoh") and dtw.endswith("-attention-dtw-links.pharaoh")
    assert download_names["Download eflomal's links"].endswith("-eflomal-links.pharaoh")
    images = [json.loads(c.proto.config)["toImageButtonOptions"]["filename"] for c in at.get("plotly_chart")]
    assert any(image.endswith("-alignment-dtw") for image in images), images
