"""Compare: one sentence through two or more models, on one target and one colour scale."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from attnviz import metrics
from attnviz.errors import InputError
from attnviz.plots import plot_config
from attnviz.plots_compare import compare_heatmaps, difference_heatmap, entropy_plot, js_plot
from attnviz.plots_data import gold_heatmap
from pages.shared.common import get_model, require_models, user_errors
from pages.shared.model_ui import pick_models, test_pairs

st.title("Compare attention")
models = require_models()

with st.sidebar:
    chosen = pick_models(models, key="cmp_models")
    values = st.radio("Show", ["weights", "scores"], key="cmp_values", horizontal=True,
                      format_func=lambda v: {"weights": "weights a_t(s)", "scores": "raw scores"}[v])  # fmt: skip
if len(chosen) < 2:
    st.info("Pick at least two models in the sidebar to compare them.")
    st.stop()
with user_errors():
    translators = {m["name"]: get_model(m) for m in chosen}
first = translators[chosen[0]["name"]]
tasks = {m["task"] for m in chosen}
if len(tasks) > 1:
    st.warning(f"These models come from different tasks ({', '.join(map(str, tasks))}); they may read the "
               "sentence differently. Pick models of one task for step-by-step comparisons.")  # fmt: skip

pairs = test_pairs(first.meta, limit=200)
pair = None
if pairs:
    use_pair = st.toggle("Pick a test pair (shows the gold alignment and AER)", key="cmp_use_pair")
    if use_pair:
        index = st.number_input("Test pair", 0, len(pairs) - 1, 0, key="cmp_pair")
        pair = pairs[int(index)]
sentence = pair.source if pair else st.text_input(
    "Source sentence", value=first.meta.get("example") or "", key="cmp_sentence", max_chars=500
)  # fmt: skip
if pair:
    st.markdown(f"Source: **{pair.source}**")

with user_errors():
    outputs = {name: tr.translate(sentence) for name, tr in translators.items()}
st.dataframe(
    pd.DataFrame({"model": list(outputs), "free translation": [translators[n].text_of(a) for n, a in outputs.items()]}),
    key="cmp_outputs", hide_index=True,
)  # fmt: skip

options = ["reference", *outputs] if pair else [*outputs, "reference"]
target_of = st.radio(
    "Align every model on", options, key=f"cmp_target_of_{'pair' if pair else 'free'}", horizontal=True,
    format_func=lambda o: "a reference" if o == "reference" else f"{o}'s output",
)  # fmt: skip
if target_of == "reference":
    target = st.text_input("Reference translation", value=pair.target if pair else "", key="cmp_reference",
                           max_chars=500)  # fmt: skip
    if not target.strip():
        st.info("Type the reference translation to align every model on it.")
        st.stop()
else:
    target = translators[target_of].text_of(outputs[target_of])
    if not target.strip():
        st.info(f"{target_of} translated the sentence to nothing; align on another model's output or a reference.")
        st.stop()
st.caption(
    "Models decoding freely write different targets, so their attention rows would not line up. Here every "
    f"model is forced through the same target (**{target}**) with teacher forcing: row t shows where each model "
    "looks while producing the same token y_t, and the rows can be compared step by step."
)

with user_errors():
    aligned = {name: tr.align(sentence, target) for name, tr in translators.items()}
fig = compare_heatmaps(aligned, values=values)
st.plotly_chart(fig, key="cmp_heatmaps", config=plot_config("compare"))
st.caption("One colour scale for all models (weights: 0 to the largest weight; scores: symmetric around 0).")

names = list(aligned)
col_a, col_b = st.columns(2)
a_name = col_a.selectbox("Difference: model A", names, index=0, key="cmp_a")
b_name = col_b.selectbox("minus model B", names, index=1, key="cmp_b")
try:
    a, b = aligned[a_name], aligned[b_name]
    st.plotly_chart(difference_heatmap(a, b, (a_name, b_name)), key="cmp_diff")
    st.caption("Red: A attends more than B; blue: less. Each row of both maps sums to 1, so each row sums to 0.")
    left, right = st.columns(2)
    left.plotly_chart(entropy_plot(aligned), key="cmp_entropy")
    left.caption("Entropy H(a_t) = −Σ_s a_t(s) ln a_t(s): 0 when one source token takes all, ln n when uniform.")
    right.plotly_chart(js_plot(a, b, (a_name, b_name)), key="cmp_js")
    right.caption("Jensen-Shannon divergence of the two rows: 0 when equal, ln 2 when they share no source token.")
except InputError as e:
    st.info(f"Step-by-step views need one grid: {e}")

if pair is not None and pair.sure is not None:
    st.subheader("Gold alignment")
    st.plotly_chart(
        gold_heatmap(pair.source_tokens, pair.target_tokens, pair.sure, pair.possible), key="cmp_gold"
    )  # fmt: skip
    if target_of == "reference" and target.strip() == pair.target.strip():
        rows = []
        for name, al in aligned.items():
            links = metrics.alignment_links(al, len(pair.source_tokens), len(pair.target_tokens))
            rows.append({"model": name, "AER": round(metrics.aer([links], [pair.sure], [pair.possible or []]), 3),
                         "mean entropy": round(metrics.mean_entropy(al), 3)})  # fmt: skip
        st.dataframe(pd.DataFrame(rows), key="cmp_aer", hide_index=True)
        st.caption("AER = 1 − (|A∩S| + |A∩P|) / (|A| + |S|), with A the argmax link of each target token "
                   "(attention on <eos> counts as no link). 0 is perfect.")  # fmt: skip
    else:
        st.caption("AER compares links with the gold target's tokens: align on the test pair's reference to see it.")
