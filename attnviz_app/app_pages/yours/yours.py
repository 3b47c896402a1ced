"""Your model: explore attention that attnviz did not train. A Hugging Face encoder-decoder
folder, a JoeyNMT checkpoint, or an attention file, each read into the same views."""

from __future__ import annotations

import streamlit as st

from attnviz_app.app_pages.explore.screen import measure_page
from attnviz_app.app_pages.yours import attention_file, hf, joeynmt

SOURCES = {
    "Hugging Face folder": hf.render,
    "JoeyNMT checkpoint": joeynmt.render,
    "Attention file": attention_file.render,
}

FIRST = next(iter(SOURCES))

measure_page()  # the maps are laid out for the page's width
st.title("Your model")
st.caption("Attention from a model attnviz did not train: read locally, nothing fetched, no code from a file run.")
source = st.segmented_control(
    "Load the model from", list(SOURCES), default=FIRST, key="yours_source", persist_state="session"
)
SOURCES[source or FIRST]()
