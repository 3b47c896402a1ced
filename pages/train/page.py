"""Train: pick data, a score function, a decoder and sizes; watch the alignment emerge."""

from __future__ import annotations

import streamlit as st

from attnviz.data import TASKS
from attnviz.errors import AttnvizError
from attnviz.jobs import REGISTRY
from pages.shared.data_ui import pick_data
from pages.shared.model_ui import session_id
from pages.train.form import cap_note, progress_panel, recipe_form, session_alive

st.title("Train a model")
st.caption(
    "Training runs in the background, one run per browser session and a few per server; other users stay "
    "responsive. The finished model is saved to the models folder and appears on every page."
)

sid = session_id()
job = REGISTRY.get(sid)
if job is not None:
    progress_panel(job)
    if job.snapshot().active:
        st.stop()
    st.divider()

with st.sidebar:
    picked = pick_data("train")
if picked is None:
    st.info("Choose the data in the sidebar.")
    st.stop()
spec, label = picked
cap_note()
recipe = recipe_form(spec, label if spec in TASKS else "custom", builtin=spec in TASKS)
if recipe is not None:
    try:
        REGISTRY.submit(sid, recipe, is_alive=session_alive(sid))
    except AttnvizError as e:
        st.error(str(e))
    else:
        st.rerun()
