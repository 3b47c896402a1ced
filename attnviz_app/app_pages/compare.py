"""Compare: one sentence through two or more models, on one target and one colour scale."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from attnviz.data import show_direction_marks
from attnviz.errors import InputError
from attnviz.evaluation import aer_rows
from attnviz.external import difference_csv, pair_csv
from attnviz.links import common_steps, for_reading, whole_rows
from attnviz.plots import (
    align_tops,
    difference_heatmap,
    entropy_plot,
    explore_heatmap,
    gold_heatmap,
    js_plot,
    plot_config,
    shared_range,
)
from attnviz.store import file_stem, models_slug
from attnviz_app.app_pages.explore.screen import measure_page, page_width
from attnviz_app.app_pages.shared.common import (
    escape_markdown,
    forced,
    get_model,
    model_version,
    require_models,
    style_name,
    translate,
    user_errors,
)
from attnviz_app.app_pages.shared.data_ui import uploaded_pairs
from attnviz_app.app_pages.shared.keys import EXPLORE_TEXT
from attnviz_app.app_pages.shared.model_ui import follow_explore, model_meta, pick_models, test_pairs
from attnviz_app.app_pages.shared.paper_ui import paper_download
from attnviz_app.app_pages.shared.reading_ui import EOS_HELP, EOS_LABEL, merge_toggle

PANEL_PX, GAP_PX = 390, 24  # a wrapping grid: 2 maps a row, in columns of 394 px at 1280 px


def grid(width: int) -> tuple[int, int]:
    """Maps a row and the widest a map may be, for a main column ``width`` px wide: two maps of
    :data:`PANEL_PX` where they fit side by side, else one a row as wide as the column."""
    return (2, PANEL_PX) if width >= 2 * PANEL_PX + GAP_PX else (1, min(width, 2 * PANEL_PX))


st.title("Compare attention")
models = require_models()
measure_page()  # the main column's width, from the browser: the grid is laid out for it
PER_ROW, PANEL = grid(page_width())
with st.sidebar:
    chosen = pick_models(models, key="cmp_models")
    values = st.radio(
        "Show",
        ["weights", "scores"],
        key="cmp_values",
        persist_state="session",
        horizontal=True,
        format_func=lambda v: {"weights": "weights $a_{t,s}$", "scores": "raw scores"}[v],
    )
    hide_eos = st.toggle(EOS_LABEL, key="cmp_eos", persist_state="session", help=EOS_HELP)
    merge = merge_toggle("cmp_merge", [m.path for m in chosen])
if len(chosen) < 2:
    st.info("Pick at least two models in the sidebar to compare them.")
    st.stop()
with user_errors():
    translators = {m.name: get_model(m) for m in chosen}
first = translators[chosen[0].name]
tasks = {m.task for m in chosen}
if len(tasks) > 1:
    st.warning(
        f"These models come from different tasks ({escape_markdown(', '.join(map(str, tasks)))}); they may "
        "read the sentence differently. Pick models of one task for step-by-step comparisons."
    )

pairs = test_pairs(model_meta(first), limit=200)
pair = None
if pairs and st.toggle(
    "Pick a test pair (shows the gold alignment and the alignment error rate, AER)",
    key="cmp_use_pair",
    persist_state="session",
):
    index = st.number_input(f"Pair (0-{len(pairs) - 1})", 0, len(pairs) - 1, 0, key="cmp_pair", persist_state="session")
    pair = pairs[int(index)]
with user_errors():
    upload = uploaded_pairs()
if pair is None and upload and upload[0]:
    own, file_name = upload
    if st.toggle(
        f"Pick a pair from your upload ({escape_markdown(file_name)})", key="cmp_use_upload", persist_state="session"
    ):
        index = st.number_input(
            f"Pair (0-{len(own) - 1})", 0, len(own) - 1, 0, key="cmp_upload_pair", persist_state="session"
        )
        pair = own[int(index)]
explored = st.session_state.get(EXPLORE_TEXT)
follow_explore("cmp_sentence", explored, lambda: explored or model_meta(first).get("example") or "")
if pair:
    sentence = pair.source
    st.markdown(f"Source: **{escape_markdown(pair.source)}**")
else:
    sentence = st.text_input("Source sentence", key="cmp_sentence", persist_state="session", max_chars=1000)
if not sentence.strip():
    st.info("Type a sentence to compare the models on.")
    st.stop()

with st.spinner("Translating with every model…"), user_errors():
    outputs = {m.name: translate(*model_version(m), sentence) for m in chosen}  # cached: a toggle redraws alone
texts = {escape_markdown(n): escape_markdown(translators[n].text_of(a)) for n, a in outputs.items()}
# static, so whole names and translations wrap at any width; its cells read Markdown
st.table(pd.DataFrame({"model": list(texts), "model's own translation": list(texts.values())}), hide_index=True)

options = ["reference", *outputs] if pair else [*outputs, "reference"]
target_of = st.radio(
    "Align every model on",
    options,
    key=f"cmp_target_of_{'pair' if pair else 'free'}",
    horizontal=True,
    format_func=lambda o: "a reference" if o == "reference" else f"{escape_markdown(o)}'s output",
    persist_state="session",
)
if target_of == "reference":
    picked = (pair.source, pair.target) if pair else None
    if pair and st.session_state.get("cmp_reference__pair") != picked:  # another pair: its own reference
        st.session_state["cmp_reference"] = pair.target
    st.session_state["cmp_reference__pair"] = picked
    st.session_state.setdefault("cmp_reference", "")
    target = st.text_input("Reference translation", key="cmp_reference", max_chars=1000, persist_state="session")
    if not target.strip():
        st.info("Type the reference translation to align every model on it.")
        st.stop()
else:
    target = translators[target_of].text_of(outputs[target_of])
    if not target.strip():
        st.info(f"{escape_markdown(target_of)} translated the sentence to nothing; align on another model's output.")
        st.stop()
st.caption(
    "Every model is forced through the same target (each step is fed the target's previous token, not its own"
    " guess), so row t of each map is the same"
    " token $y_t$ and the rows can be compared step by step:"
)
st.text(show_direction_marks(target))  # a U+202E in an uploaded reference would turn the line around

with st.spinner("Aligning…"), user_errors():
    aligned = {m.name: forced(*model_version(m), sentence, target) for m in chosen}
reading = {name: for_reading(al, hide_eos, merge) for name, al in aligned.items()}
aligned = {name: r.alignment for name, r in reading.items()}
zmin, zmax = shared_range(list(aligned.values()), values)
names = list(aligned)
for start in range(0, len(names), PER_ROW):
    row = names[start : start + PER_ROW]
    titles = [f"{name} ({reading[name].note})" if reading[name].note else name for name in row]
    figs = align_tops(
        [
            explore_heatmap(aligned[name], values, title, zmin, zmax, max_width=PANEL)
            for name, title in zip(row, titles, strict=True)
        ]
    )
    for col, name, fig in zip(st.columns(PER_ROW, gap="medium"), row, figs, strict=False):
        col.plotly_chart(
            fig,
            key=f"cmp_heat_{start}_{name}",
            width="content",
            config=plot_config(file_stem(name, sentence, "forced-weights")),
        )
rule = next((f"{r.rule} " for r in reading.values() if r.note), "")
st.caption(
    escape_markdown(
        f"{rule}One colour scale for all models (weights: 0 to the largest weight; scores: symmetric around 0)."
    )
)
lines = {m.name: f"{m.score} / {style_name(m.style)}" for m in chosen}  # under each map's name
figure_stem = file_stem(models_slug(names), sentence, f"forced-figure-{values}")  # every model, whole
paper_download(aligned, lines, sentence, values, figure_stem, "cmp_paper", rule.strip())
st.download_button(  # the maps' numbers, as shown: a row per (model, step, source token)
    f"Every map's {values} (CSV)",
    pair_csv(aligned, {name: name for name in names}, values),
    file_name=f"{file_stem(models_slug(names), sentence, f'forced-{values}')}.csv",
    mime="text/csv",
    key="cmp_csv",
    on_click="ignore",
)

col_a, col_b = st.columns(2)
# a model that left the grid gives way to one the other box does not hold: A = B only when asked for
kept_a, kept_b = (st.session_state.get(k) if st.session_state.get(k) in names else None for k in ("cmp_a", "cmp_b"))
st.session_state["cmp_a"] = kept_a or next(n for n in names if n != kept_b)
st.session_state["cmp_b"] = kept_b or next(n for n in names if n != st.session_state["cmp_a"])
a_name = col_a.selectbox("Difference: model A", names, key="cmp_a", persist_state="session")
b_name = col_b.selectbox("minus model B", names, key="cmp_b", persist_state="session")
try:
    a, b = common_steps(aligned[a_name], aligned[b_name])
    difference = difference_heatmap(a, b, (a_name, b_name), max_width=page_width())
    minus = models_slug([a_name, b_name], joiner="minus")
    st.plotly_chart(difference, key="cmp_diff", config=plot_config(file_stem(minus, sentence, "forced-difference")))
    sums = (
        "Each row of both maps sums to 1, so each row of the difference sums to 0."
        if whole_rows(a.weights) and whole_rows(b.weights)
        else "A local-p map's rows sum to less than 1 (its Gaussian follows the softmax), so a row need not sum to 0."
    )
    st.caption(f"Red (+): A attends more than B; blue (−): less. {sums}")
    st.download_button(
        "Difference (CSV)",
        difference_csv(a, b),
        file_name=f"{file_stem(minus, sentence, 'forced-difference')}.csv",
        mime="text/csv",
        key="cmp_diff_csv",
        on_click="ignore",
    )
    left, right = st.columns(2)
    left.plotly_chart(
        entropy_plot(aligned),
        key="cmp_entropy",
        config=plot_config(file_stem(models_slug(names), sentence, "forced-entropy")),
    )
    left.caption(
        r"Entropy $H(a_t) = -\sum_s a_{t,s} \ln a_{t,s}$: 0 when one source token takes all, $\ln n$ when uniform."
    )
    right.plotly_chart(
        js_plot(a, b, (a_name, b_name)),
        key="cmp_js",
        config=plot_config(file_stem(models_slug([a_name, b_name]), sentence, "forced-js")),
    )
    right.caption("Jensen-Shannon divergence of the two rows: 0 when equal, ln 2 when they share no source token.")
except InputError as e:
    st.info(f"Step-by-step views need one grid: {escape_markdown(str(e))}")

if pair is not None and pair.sure is not None:
    st.header("Gold alignment")
    st.plotly_chart(gold_heatmap(pair.source_tokens, pair.target_tokens, pair.sure, pair.possible), key="cmp_gold")
    if target_of == "reference" and target.strip() == pair.target.strip():
        st.dataframe(pd.DataFrame(aer_rows(aligned, pair)), key="cmp_aer", hide_index=True)
        st.caption(
            "AER = 1 − (|A∩S| + |A∩P|) / (|A| + |S|), with A the argmax link of each target token "
            "(attention on <eos> counts as no link). 0 is perfect."
        )
    else:
        st.caption("AER compares links with the gold target's tokens: align on the test pair's reference to see it.")
