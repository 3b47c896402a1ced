"""Learn: the attention mechanism with the product's own numbers."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.explain import all_scores, parameter_rows, score_doc, score_formula, score_parameters, score_reading
from attnviz.model import SCORES, is_local
from attnviz.plots import encoder_attention_heatmaps
from attnviz_app.app_pages.shared.common import escape_markdown, get_model, session_models, user_errors
from attnviz_app.app_pages.shared.learn_ui import worked_example_section
from attnviz_app.app_pages.shared.model_ui import model_meta

st.title("How attention works")
st.markdown(
    "At each decoder step $t$ the model **scores** every encoder annotation $h_s$ (read as the key $\\bar h_s$: "
    "the annotation itself, or its two directions summed) against a decoder state, turns the scores into weights "
    "with a **softmax**, and reads the **context vector** $c_t = \\sum_s a_{t,s}\\,h_s$. The score functions "
    "below differ only in the first step (local-m and local-p also keep the softmax to a window)."
)

worked_example_section()

st.header("Score functions")
with user_errors():
    models = session_models()
entry = None
if models:
    by_name = {m.name: m for m in models}
    name = st.selectbox("Parameter sizes from model", list(by_name), key="learn_model", persist_state="session")
    entry = by_name[name]
translator = None
if entry is not None:
    with user_errors():
        translator = get_model(entry)
cfg = translator.config if translator else None
score = st.selectbox(
    "Score function",
    all_scores(),
    key="learn_score",
    persist_state="session",
    index=all_scores().index(cfg.score) if cfg else 0,
)
style = cfg.style if cfg else "luong"  # the formula and the sentence under it read the same query
st.latex(score_formula(score, style))
st.markdown(score_reading(score, style))
with st.expander("What the code says"):
    st.caption(
        "The docstring of the score's class (`attnviz/model/scores.py`; local-m and local-p in "
        "`attnviz/model/local_scores.py`). It writes the query as the score's paper does "
        "($h_t$ in Luong's, $s_{t-1}$ in Bahdanau's); every score runs with either decoder, and the formula above "
        "reads the query of the model's own."
    )
    st.markdown(score_doc(score))
if SCORES[score].needs_equal_dims:
    st.info(
        "This score compares the decoder state and the encoder annotation directly, so it needs both in one space "
        "(same size, same meaning per coordinate); `general` inserts a learned matrix $W_a$ to map one onto the "
        "other. With a bidirectional encoder, whose annotations $[\\overrightarrow{h}_s; \\overleftarrow{h}_s]$ are "
        "twice the decoder's size, attnviz scores against their sum $\\overrightarrow{h}_s + \\overleftarrow{h}_s$: "
        "no parameters, so it stays a pure dot product (the context still averages the full annotations)."
    )
if cfg is not None:
    own = score == cfg.score
    name = escape_markdown(entry.name)
    try:
        shapes = score_parameters(
            score, cfg.hidden_dim, cfg.memory_dim, cfg.attn_dim, cfg.max_src_len, cfg.local_content
        )
    except AttnvizError as e:  # dot on annotations of another size than the decoder's, say
        st.info(f"`{score}` is impossible at the sizes of {name}: {escape_markdown(str(e))}")
        shapes = None
    if shapes is not None:
        rows = parameter_rows(shapes)
        content = f", content score `{cfg.local_content}`" if is_local(score) else ""
        where = (
            f"Parameters of `{score}` in {name}" if own else f"Parameters `{score}` would have at the sizes of {name}"
        )
        st.markdown(f"**{where}{content}: {sum(r['count'] for r in rows):,}** (named as in the formula above)")
        if rows:
            st.dataframe(pd.DataFrame(rows), key="learn_params", hide_index=True)
        else:
            st.caption("None: this score has nothing to learn.")

st.header("Bahdanau or Luong: which state asks?")
st.markdown(
    "- **Bahdanau** (2015) scores with the *previous* state $s_{t-1}$, then feeds $c_t$ into the RNN step "
    "that makes $s_t$.\n- **Luong** (2015) runs the RNN step first and scores with the *current* state "
    "$h_t$; $c_t$ is combined with $h_t$ into $\\tilde h_t = \\tanh(W_c[c_t; h_t])$ to predict the word."
)

if translator is not None and cfg.encoder == "transformer":
    st.header("Encoder self-attention")
    with user_errors():
        al = translator.translate(model_meta(translator).get("example") or "a b c")
    st.plotly_chart(encoder_attention_heatmaps(al), key="learn_encoder_attn")
    st.caption("Each map: query token (row) attends over key tokens (column), per layer and head.")
elif translator is not None:
    st.caption(f"{escape_markdown(entry.name)} has an RNN ({cfg.encoder}) encoder: no encoder self-attention to show.")
