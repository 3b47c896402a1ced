"""Explore's Alignment view, drift (AppTest, tiny models): the expander measures attention's and eflomal's
links against the built-in gold, and attention's against an uploaded gold file a word behind them, with the
corpus's map, a table of the pairs and the shown pair's links."""

from __future__ import annotations

import json
import re

from streamlit.testing.v1 import AppTest

import attnviz
from attnviz.links import align_corpus, corpus_drift
from tests.support.app import TEXT, start

GOLD_VIEW = {"explore_text": TEXT, "explore_view": "Alignment", "explore_align_part": "gold"}


def specs(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def markdown(at: AppTest) -> list[str]:
    """The page's markdown as the user reads it (escapes removed)."""
    return [re.sub(r"\\(.)", r"\1", m.value) for m in at.markdown]


def titles(at: AppTest) -> list[str]:
    return [s["layout"]["title"]["text"].replace("<br>", " ") for s in specs(at)]


def test_the_drift_expander_is_closed_until_opened_then_maps_the_built_in_gold(app_env):
    at = start(**GOLD_VIEW)
    assert not at.exception, at.exception
    assert any(e.label.startswith("Drift:") for e in at.expander)
    assert not any("drift of the" in t for t in titles(at))  # lazy: nothing measured while closed
    at.session_state["explore_drift_open"] = True
    at.run()
    assert not at.exception, at.exception
    assert at.segmented_control(key="explore_drift_of").options == ["attention (argmax)", "eflomal"]
    profile = next(s for s in specs(at) if "drift of the source index" in s["layout"]["title"]["text"])
    assert [d["type"] for d in profile["data"]] == ["heatmap", "scatter", "bar"]
    assert profile["layout"]["yaxis"]["ticktext"] == ["-3", "-2", "-1", "0", "+1", "+2", "+3"]
    assert any(m.startswith("attention (argmax): offset ") for m in markdown(at))
    table = next(d.value for d in at.dataframe if "offset" in d.value.columns)
    assert list(table["pair"]) == list(range(len(table)))
    assert set(table["offset"]) <= {*profile["layout"]["yaxis"]["ticktext"], "undecided"}
    assert any(t.startswith("Pair 0 · attention (argmax) against the gold") for t in titles(at))

    at.segmented_control(key="explore_drift_of").set_value("eflomal").run()
    at.segmented_control(key="explore_drift_side").set_value("target").run()
    assert not at.exception, at.exception
    assert any(t.startswith("eflomal: drift of the target index") for t in titles(at))
    at.number_input(key="explore_gold_pair").set_value(2).run()
    assert any(t.startswith("Pair 2 · eflomal") for t in titles(at))


def test_a_gold_file_a_word_behind_attention_shows_as_offset_plus_one(app_env):
    sources = [["the", "girl", "sees", "the", "black", "cat", "."], ["the", "cat", "eats", "the", "red", "apple", "."]]
    targets = [["la", "fille", "voit", "le", "chat", "noir", "."], ["le", "chat", "mange", "la", "pomme", "rouge", "."]]
    model = attnviz.load(str(app_env / "toyfr-general-luong.safetensors"))  # the model Explore opens on
    links = align_corpus(model, sources, targets).links
    # the gold one source word behind attention's links from target word 2 on: attention one word ahead of it
    gold = [sorted((i - 1, j) if j >= 2 else (i, j) for i, j in x if j < 2 or i >= 1) for x in links]
    expected = corpus_drift(links, gold, [(7, 7), (7, 7)])
    assert expected.drift == 1  # the tiny model's links move at least two words each: a drift, planted

    at = start(**GOLD_VIEW, explore_drift_open=True)
    at.radio(key="explore_gold_source").set_value("upload").run()
    for key, lines in (("explore_gold_src_file", sources), ("explore_gold_tgt_file", targets)):
        at.file_uploader(key=key).set_value(
            (f"{key}.txt", "".join(" ".join(x) + "\n" for x in lines).encode(), "text/plain")
        )
    pharaoh = "".join(" ".join(f"{i}-{j}" for i, j in x) + "\n" for x in gold).encode()
    at.file_uploader(key="explore_gold_file").set_value(("gold.txt", pharaoh, "text/plain")).run()
    assert not at.exception and not at.error, at.error
    assert f"attention (argmax): {expected.summary()}." in markdown(at)
    assert "offset +1 in 2 of 2 sentences (100%)" in expected.summary()
    pair = next(s for s in specs(at) if s["layout"]["title"]["text"].startswith("Pair 0"))
    s0 = expected.sentences[0]
    assert f"offset +1 from target word {s0.start}" in pair["layout"]["title"]["text"].replace("<br>", " ")
    arrows = [a for a in pair["layout"]["annotations"] if a.get("showarrow")]
    assert len(arrows) >= s0.gain and all(a["ax"] - a["x"] == 1 for a in arrows)  # each from attention to gold
