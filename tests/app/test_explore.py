"""The Explore page (app.py) driven by Streamlit's AppTest, on tiny models trained for the session."""

from __future__ import annotations

import html
import io
import json
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from attnviz.plots.heatmap import display_tokens
from attnviz.plots.whatif import changed_steps
from attnviz.store.checkpoint import load_checkpoint
from attnviz_app.app_pages.explore.views import PLAY_KEY
from attnviz_app.app_pages.shared.common import escape_markdown
from tests.support.app import EXAMPLE, TEXT
from tests.support.paths import APP


def start(view: str | None = None, **state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in state.items():
        at.session_state[key] = value
    if view:
        at.session_state["explore_view"] = view
    return at.run()


def specs(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def heatmap(at: AppTest) -> dict:
    """The main alignment heatmap's spec (the first chart of the page)."""
    assert not at.exception, at.exception
    spec = specs(at)[0]
    assert any(trace["type"] == "heatmap" for trace in spec["data"])
    return spec


def ticks(spec: dict) -> list[str]:
    return spec["layout"]["xaxis"]["ticktext"]


def tokens_of(text: str) -> list[str]:
    from attnviz.data.toyfr import TOKENIZER

    return display_tokens([*TOKENIZER.split(text), "<eos>"])


def test_first_load_shows_the_example_alignment(app_env):
    at = start()
    spec = heatmap(at)
    assert at.text_input(key="explore_text").value == EXAMPLE
    assert ticks(spec) == tokens_of(EXAMPLE)
    assert spec["layout"]["xaxis"]["tickvals"] == list(range(len(tokens_of(EXAMPLE))))  # "the" x3 kept apart
    heat = next(t for t in spec["data"] if t["type"] == "heatmap")  # its own hover, no click layer over it
    assert "source [0]: the" in heat["text"][0][0] and "target [0]" in heat["text"][0][0]  # tokens as text,
    assert "weight: %{z" in heat["hovertemplate"] and "score: %{customdata" in heat["hovertemplate"]  # numbers
    assert [t["type"] for t in spec["data"]] == ["heatmap"]
    latex = [e.value for e in at.get("latex")]
    assert latex and any(r"\mathrm{softmax}" in line for line in latex)  # the default cell's math panel
    assert not at.error


def test_typing_a_sentence_redraws(app_env):
    at = start()
    at.text_input(key="explore_text").set_value("the dog eats the apple .").run()
    assert ticks(heatmap(at)) == tokens_of("the dog eats the apple .")


def test_switching_score_keeps_the_sentence_and_moves_to_a_style_that_has_it(app_env):
    at = start()
    text = "the girl sees the cat ."
    at.text_input(key="explore_text").set_value(text).run()
    first = heatmap(at)
    assert "general / Luong" in first["layout"]["title"]["text"]
    at.selectbox(key="explore_score").set_value("additive").run()
    second = heatmap(at)
    assert at.segmented_control(key="explore_style").value == "bahdanau"  # additive exists in Bahdanau only
    assert "additive / Bahdanau" in second["layout"]["title"]["text"]
    assert ticks(second) == tokens_of(text) and at.text_input(key="explore_text").value == text
    assert first["data"][0]["z"] != second["data"][0]["z"]
    at.selectbox(key="explore_score").set_value("local_p").run()
    third = heatmap(at)
    assert any(t.get("name") == "p_t" for t in third["data"])  # local-p draws its centres
    assert ticks(third) == tokens_of(text)


def test_switching_task_loads_its_example(app_env):
    at = start()
    at.selectbox(key="explore_task").set_value("dates").run()
    spec = heatmap(at)
    text = at.text_input(key="explore_text").value
    assert text != EXAMPLE and "dot / Luong" in spec["layout"]["title"]["text"]
    assert not at.warning, "the dates example has no unknown characters"


@pytest.mark.parametrize(
    ("text", "unknown"),
    [
        ("the cat\x00 eats\x07 .", None),  # control characters: the words around them are read
        ("the 🐱 eats the apple", "🐱"),
        ("the cat مرحبا eats", "مرحبا"),
        ("e\u0301 the cat", "é"),
        ("?!?!", "\\!"),  # Markdown-escaped in the notice
        ("***", "\\*"),
    ],
)
def test_odd_text_is_translated_with_its_unknown_words_named(app_env, text, unknown):
    at = start()
    at.text_input(key="explore_text").set_value(text).run()
    heatmap(at)
    assert not at.error
    said = "Unknown to this model (read as `<unk>`, marked ⚠ in the heatmap): “\u2068{}\u2069”"
    assert [unicodedata.normalize("NFC", w.value) for w in at.warning] == (
        [] if unknown is None else [said.format(unknown)]
    )


def test_long_sentence_stays_readable(app_env):
    text = " ".join(["the black cat eats the apple of the girl ."] * 7)  # 70 tokens
    at = start()
    at.text_input(key="explore_text").set_value(text).run()
    spec = heatmap(at)
    assert len(ticks(spec)) == 71 and spec["layout"]["xaxis"]["tickangle"] == -90  # narrow cells: upright labels
    assert spec["layout"]["width"] < 71 * 20 + 300  # cells shrink towards the page width, 14 px at least


ADDITIVE = {"explore_score": "additive", "explore_style": "bahdanau"}  # the tiny model that writes several steps


def test_step_slider_moves_the_per_step_view(app_env):
    at = start("Per step", **ADDITIVE)
    assert not at.exception
    titles = [s["layout"]["title"]["text"] for s in specs(at)]
    assert titles[0].startswith("Step 0")
    assert len(specs(at)) == 2, "the animation is built only once its expander is opened"
    at.session_state[PLAY_KEY] = True
    at.run()
    assert specs(at)[2].get("frames"), "the play-button animation has frames"
    at.slider(key="explore_step").set_value(1).run()
    titles = [s["layout"]["title"]["text"] for s in specs(at)]
    assert titles[0].startswith("Step 1") and titles[1].startswith("Context vector c<sub>1</sub>")


def test_beam_width_shows_the_nbest_list(app_env):
    at = start("Beam search")
    assert any("Greedy" in i.value for i in at.info)
    at.slider(key="explore_beam").set_value(3).run()
    assert not at.exception
    table = at.table[-1].value  # a static table: every column shown, the translations wrapped
    assert list(table.columns) == ["rank", "translation", "log p", "tokens", "log p / tokens"]
    assert 1 < len(table) <= 3 and list(table["log p / tokens"]) == sorted(table["log p / tokens"], reverse=True)
    assert np.allclose(table["log p / tokens"], table["log p"] / table["tokens"])
    first = table["translation"][0]  # the text as the translation line shows it (escaped: cells read Markdown)
    assert any(m.value.endswith(f": {first}") for m in at.markdown), first
    ranks = [e for e in at.expander if e.label.startswith("#")]
    assert len(ranks) == len(table)
    for k, (rank, row) in enumerate(zip(ranks, table.itertuples(), strict=True)):
        assert rank.label.startswith(f"#{k + 1} · ")  # the translation and the score it is ranked by
        assert rank.label.endswith(row.translation + escape_markdown(f" ({row._5:.3f})"))
    opened = [m.value for m in ranks[0].markdown]  # the first rank is open: its text, numbers and map
    assert any(first in m and "log p = " in m and f"log p / {table['tokens'][0]} tokens" in m for m in opened)
    assert all(any(t["type"] == "heatmap" for t in s["data"]) for s in specs(at))


@pytest.mark.parametrize("text", ["", "   ", "x" * 3000])
def test_bad_text_gives_a_message_not_a_traceback(app_env, text):
    at = start()
    at.text_input(key="explore_text").set_value(text).run()
    assert not at.exception
    assert at.warning or at.error
    assert not at.get("plotly_chart")
    if at.error:  # a library message shown as a sentence: capitalised, with its full stop
        shown = at.error[0].value.replace("\\", "")  # Markdown escapes
        assert shown == "The source is 3,000 characters long; the limit is 2,000. Give one sentence at a time."


def test_html_in_tokens_is_escaped(app_env):
    at = start()
    at.text_input(key="explore_text").set_value("the <script>alert(1)</script> cat").run()
    labels = ticks(heatmap(at))
    assert "&lt;" in labels and "script&gt;" in "".join(labels)
    assert not any("<script" in label or label == "<" for label in labels)
    assert at.warning, "unknown words are listed"


def test_a_right_to_left_unknown_word_is_isolated_in_its_notice(app_env):
    at = start()
    at.text_input(key="explore_text").set_value("the كلب cat").run()
    notice = at.warning[0].value
    assert "“\u2068كلب\u2069”" in notice  # FSI…PDI: the Arabic word keeps its place among English words


def test_what_if_forces_attention_and_replaces_a_word(app_env):
    at = start("What-if", explore_force_step=0, explore_force_source=2, **ADDITIVE)
    assert not at.exception
    model = load_checkpoint(app_env / "toyfr-additive-bahdanau.safetensors")
    text = at.text_input(key="explore_text").value
    base = model.translate(text)
    onehot = [1.0 if s == 2 else 0.0 for s in range(len(base.source_tokens))]
    forced = model.translate(text, overrides={0: onehot})  # step 0 attends only to source token 2
    steps = changed_steps(base.target_tokens, forced.target_tokens)
    said = f"{len(steps)} target step(s) changed: {', '.join(map(str, steps))}" if steps else "No target step changed."
    assert [m.value for m in [*at.warning, *at.success]] == [said]
    shown = (
        f"**Original:** {escape_markdown(model.text_of(base))}  \n**Forced:** {escape_markdown(model.text_of(forced))}"
    )
    assert shown in [m.value for m in at.markdown]
    at.text_input(key="explore_replace_word").set_value("dog").run()
    assert not at.exception
    assert any("dog" in m.value for m in at.markdown)
    assert len(at.dataframe) == 2  # one table per what-if


def test_downloads_carry_the_matrices(app_env, media):
    at = start("Export")
    assert not at.exception
    files, names = {}, []
    for button in at.get("download_button"):
        data, name = media[Path(button.proto.url).stem]
        files[name.rsplit("-", 1)[-1] if "-" in name else name] = data.decode()
        names.append(name)
    tr = load_checkpoint(app_env / "toyfr-general-luong.safetensors")
    al = tr.translate(EXAMPLE)
    weights = pd.read_csv(io.StringIO(files["weights.csv"]))
    assert len(weights) == len(al.target_tokens)  # one row per target step
    assert list(weights["target"]) == al.target_tokens
    np.testing.assert_allclose(weights.iloc[:, 2:].to_numpy(), al.weights, atol=1e-5)
    assert len(pd.read_csv(io.StringIO(files["scores.csv"]))) == len(al.target_tokens)
    (matrix,) = json.loads(files["alignment.json"])["matrices"]  # read back under the model's name
    assert matrix["name"] == "toyfr-general-luong" and json.loads(files["alignment.json"])["metadata"]["sentence"]
    assert matrix["target_tokens"] == al.target_tokens and matrix["pharaoh"] == al.to_pharaoh()
    pharaoh = next(v for k, v in files.items() if k.endswith(".pharaoh"))
    words = [f"{s}-{t}" for s, t in al.hard_links() if s < len(al.source_tokens) - 1 and t < len(al.output_tokens)]
    assert pharaoh.split() == words  # the links of <eos> left out
    assert all(name.startswith("toyfr-general-luong-") for name in names)  # the model, then the sentence


def test_the_math_panel_shows_the_outlined_cell(app_env, download_names):
    at = start(explore_cell=(1, 2), **ADDITIVE)
    spec = heatmap(at)
    assert not spec["layout"].get("shapes"), "the figure does not depend on the cell: a click re-sends none"
    cursor = json.loads(at.get("bidi_component")[0].proto.json)  # the browser outlines it (cursor.js)
    assert cursor["cell"] == [1, 2] and cursor["charts"] == ["explore_heat_weights_Bahdanau"]
    (panel,) = cursor["panels"]
    assert [html.escape(tok, quote=False) for tok in panel["source"]] == ticks(spec)  # the map's columns
    assert cursor["values"] == "weights" and "weights" not in panel  # the numbers: the map's z and customdata
    assert any("t=1" in m.value and "s=2" in m.value for m in at.markdown)
    at.number_input(key="explore_cell_t_weights").set_value(0).run()  # the arrow keys step the box
    assert at.session_state["explore_cell"] == (0, 2)
    vectors = {label: name for label, name in download_names.items() if label.startswith("Every vector")}
    assert vectors == {  # after the model and the sentence, as every file Explore offers
        "Every vector (CSV)": "toyfr-additive-bahdanau-the-black-cat-does-not-eat-the-apple-of-1b3e7899-cell-0-2.csv",
        "Every vector (JSON)": "toyfr-additive-bahdanau-the-black-cat-does-not-eat-the-apple-of-1b3e7899-cell-0-2.json",
    }, vectors


def test_a_click_builds_no_map_again(app_env, monkeypatch):
    """A click (here the arrow keys' box) changes only the cell: its rerun reuses the maps the last run
    built; a new sentence builds them again."""
    from attnviz_app.app_pages.explore import views

    built = []
    real = views.explore_heatmap
    monkeypatch.setattr(views, "explore_heatmap", lambda *a, **k: built.append(a[1]) or real(*a, **k))
    at = start(explore_cell=(1, 2), **ADDITIVE)
    first = heatmap(at)
    assert built == ["weights"]
    at.number_input(key="explore_cell_t_weights").set_value(0).run()
    assert at.session_state["explore_cell"] == (0, 2) and built == ["weights"]  # the cell moved, no map built
    assert heatmap(at) == first
    at.text_input(key="explore_text").set_value("the cat eats the apple .").run()
    assert built == ["weights", "weights"] and heatmap(at) != first


def test_lexicon_is_sent_only_when_opened(app_env):
    at = start()
    assert not at.dataframe
    at = start(explore_lexicon_open=True)
    assert not at.exception
    assert len(at.dataframe[0].value) > 100 and {"english", "french"} <= set(at.dataframe[0].value.columns)


def test_local_p_per_step_shows_window_and_centre(app_env):
    at = start("Per step", explore_score="local_p", **{PLAY_KEY: True})
    assert not at.exception
    step = specs(at)[0]
    assert step["layout"].get("shapes"), "the window [p_t - D, p_t + D] is shaded"
    assert any("p_{0}" in m.value for m in at.markdown)
    assert all(f.get("layout", {}).get("shapes") for f in specs(at)[2]["frames"])


def test_figure_download_format(app_env):
    for fmt in ("png", "svg"):
        at = start(explore_image_format=fmt)
        config = json.loads(at.get("plotly_chart")[0].proto.config)
        assert (
            config["toImageButtonOptions"]["format"] == fmt and config["scrollZoom"] is False
        )  # the wheel scrolls the page


def test_a_copied_unk_is_explained(app_env, monkeypatch):
    from attnviz.decoding.trace import Alignment

    monkeypatch.setattr(Alignment, "unk_copies", lambda self: {0: 1})  # as if step 1 said <unk>
    at = start(**ADDITIVE)
    heatmap(at)
    captions = " ".join(c.value for c in at.caption)
    assert "replaced by the source word" in captions and "step 1 → “\u2068black\u2069”" in captions
    assert any("black" in m.value for m in at.markdown if m.value.startswith("**Bahdanau** ·"))


def test_weights_view_shows_coverage_per_source_token(app_env):
    assert "Coverage" not in " ".join(json.dumps(s["layout"].get("title")) for s in specs(start()))  # lazy
    at = start(explore_coverage_open=True)
    charts = specs(at)
    coverage = next(s for s in charts if "Coverage" in (s["layout"].get("title") or {}).get("text", ""))
    assert coverage["layout"]["xaxis"]["ticktext"] == ticks(heatmap(at))
    totals = coverage["data"][0]["y"]
    assert len(totals) == len(tokens_of(EXAMPLE))
    n_steps = len(heatmap(at)["layout"]["yaxis"]["ticktext"])
    assert sum(totals) == pytest.approx(n_steps, rel=1e-4)  # every step's row sums to 1


def test_export_says_its_files_hold_the_decode_when_the_maps_hide_eos(app_env):
    at = start("Export")
    assert not at.exception and not at.info  # the maps show the decode as it is: nothing to say
    at = start("Export", explore_eos=True)
    assert not at.exception
    (note,) = [i.value for i in at.info]
    assert note.startswith(r"The maps show the decode read for words (\<eos\> hidden") and "`<eos>` included" in note


def test_what_if_in_both_leaves_a_translation_without_the_step_as_it_is(app_env):
    """(The shorter translation was forced at its own last step instead, while the caption said both
    models are forced at the same step.)"""
    for text in (TEXT, "cat", "the cat", "the black cat eats", ".", "the girl", "apple apple apple"):
        at = start("What-if", explore_style="both", explore_text=text)
        box = at.selectbox(key="explore_force_step")
        short = [k for k, label in enumerate(box.options) if "–" in label]  # a step one translation lacks
        if short:
            break
    assert short, "no sentence whose two translations differ in length"
    box.set_value(short[-1]).run()
    assert not at.exception, at.exception
    assert any(f"so it has no step {short[-1]}: not forced" in c.value for c in at.caption)


def test_what_if_says_it_works_on_the_greedy_decode_when_the_beam_is_wider(app_env):
    greedy = [c.value for c in start("What-if").caption]
    assert not any("greedy decode (beam width 1)" in c for c in greedy)
    wide = start("What-if", explore_beam=3)
    assert any("What-if works on the greedy decode (beam width 1)" in c.value for c in wide.caption)
