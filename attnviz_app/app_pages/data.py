"""Data: browse a data set as a table, its summary and lengths, gold alignments, the toy-fr lexicon."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from attnviz.data import LEXICON, TASKS, pairs_frame
from attnviz.plots import gold_heatmap, length_histogram, plot_config
from attnviz_app.app_pages.shared.common import user_errors, user_text
from attnviz_app.app_pages.shared.data_ui import cached_corpus, corpus_summary, pick_data

st.title("Data")
st.caption("The sentence pairs a model learns from. Built-in tasks come with gold alignments.")

with st.sidebar:
    picked = pick_data("data")
    builtin = picked is not None and picked[0] in TASKS  # a task is generated: as many pairs as asked
    n_rows = (
        st.number_input("Pairs per split", 10, 5000, 500, step=50, key="data_n", persist_state="session")
        if builtin
        else None
    )
if picked is None:  # an upload still to come, or one the sidebar says it could not read
    st.info("Choose the data in the sidebar; if a file cannot be read, the sidebar says why.")
    st.stop()
spec, label = picked
sizes = (n_rows, n_rows, n_rows) if builtin else (None, None, None)
with user_errors():
    corpus = cached_corpus(spec, *sizes)

summary = corpus_summary(spec, *sizes)
cols = st.columns(5)
cols[0].metric("Training pairs", summary["pairs"]["train"])
cols[1].metric("Validation pairs", summary["pairs"]["valid"])
cols[2].metric("Test pairs", summary["pairs"]["test"])
VOCAB_HELP = "The vocabulary built from the training split's {} side"
cols[3].metric("Source vocabulary", summary["source_vocab_size"], help=VOCAB_HELP.format("source"))
cols[4].metric("Target vocabulary", summary["target_vocab_size"], help=VOCAB_HELP.format("target"))
for note in summary["notes"]:
    st.caption(f"ℹ️ {user_text(note)}")

split = st.radio("Split", ["train", "valid", "test"], key="data_split", persist_state="session", horizontal=True)
pairs = corpus.split(split)
if not pairs:
    st.info(f"The {split} split is empty.")
    st.stop()
frame = pairs_frame(pairs)
HEADERS = {  # display names only: the histograms below read the frame's own column names
    "source": "Source",
    "target": "Target",
    "source_len": "Source length",
    "target_len": "Target length",
    "sure_links": "Sure links",
    "possible_links": "Possible links",
}
if not corpus.has_gold:  # no gold links to count: no columns of blanks
    frame = frame.drop(columns=["sure_links", "possible_links"])
st.dataframe(frame.rename(columns=HEADERS), key="data_table", width="stretch", height=320, placeholder="–")
tokenizer = corpus.source_tokenizer
unit = "subword pieces" if tokenizer.bpe is not None else "words"
unit = "characters" if tokenizer.kind == "char" else f"tokens: {unit} and punctuation marks"
st.caption(f"{len(frame)} pairs in {split}. Lengths count {unit}.")

left, right = st.columns(2)
left.plotly_chart(length_histogram(frame, "source_len", "Source sentence length"), key="data_hist_src")
right.plotly_chart(length_histogram(frame, "target_len", "Target sentence length"), key="data_hist_tgt")
with st.expander("Length statistics per split"):
    stat = {"p95": "95th percentile"}
    stats = {f"Source {stat.get(k, k)}": v for k, v in summary["source_length"].items()}
    stats |= {f"Target {stat.get(k, k)}": v for k, v in summary["target_length"].items()}
    st.dataframe(pd.DataFrame(stats).T, key="data_stats")

if corpus.has_gold:
    st.header("Gold alignment")
    st.caption("Which source token each target token translates: the answer attention should find (links i-j).")
    index = st.number_input(
        f"Pair (0-{len(pairs) - 1})", 0, len(pairs) - 1, 0, key="data_pair", persist_state="session"
    )
    pair = pairs[int(index)]
    st.text(f"{pair.source}  →  {pair.target}")
    with user_errors():
        fig = gold_heatmap(pair.source_tokens, pair.target_tokens, pair.sure or [], pair.possible)
    st.plotly_chart(fig, key="data_gold", config=plot_config("gold-alignment"))

if spec == "toy-fr":
    st.header("The toy-fr lexicon")
    st.caption("Every word the toy language knows: type your own sentences with them on the Explore page.")
    query = st.text_input("Search (English or French)", key="data_lexicon_q", max_chars=50, persist_state="session")
    lexicon = pd.DataFrame(LEXICON)
    if query.strip():
        q = query.strip().lower()
        lexicon = lexicon[
            lexicon["english"].str.contains(q, regex=False) | lexicon["french"].str.contains(q, regex=False)
        ]
    names = {"english": "English", "french": "French", "pos": "Part of speech", "gender": "Gender"}
    st.dataframe(lexicon.rename(columns=names), key="data_lexicon", width="stretch", hide_index=True)
