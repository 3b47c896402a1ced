"""Your model: an attention file (JSON or NPZ written by any toolkit), read into the shared views."""

from __future__ import annotations

import json

import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.external import EXAMPLE_ATTENTION, MAX_ATTENTION_BYTES, AttentionFile, read_attention
from attnviz_app.app_pages.shared.common import error_text, escape_markdown
from attnviz_app.app_pages.yours.panel import show_alignments

KEY = "yours_file"


@st.cache_data(max_entries=8, show_spinner="Reading the attention file…")
def _read(data: bytes, name: str) -> AttentionFile:
    return read_attention(data, name)


def render() -> None:
    st.markdown(
        "Source tokens, target tokens and one or more `[target, source]` attention matrices (layers, heads, beam "
        "hypotheses, models), as JSON or NPZ: the schema and how to write it from fairseq, OpenNMT-py or Marian are "
        "in docs/your-model.md. Explore's *Everything (JSON)* export reads back here too."
    )
    st.download_button(
        "Example file (JSON)",
        json.dumps(EXAMPLE_ATTENTION, indent=1),
        "attention-example.json",
        "application/json",
        key=f"{KEY}_example",
    )
    upload = st.file_uploader("Attention file", type=["json", "npz"], key=f"{KEY}_upload")
    if upload is None:
        st.info("Upload a .json or .npz attention file.")
        return
    if upload.size > MAX_ATTENTION_BYTES:  # the uploader's own limit may be set higher
        st.error(
            f"{escape_markdown(upload.name)} is {upload.size / 2**20:.0f} MB, above the "
            f"{MAX_ATTENTION_BYTES // 2**20} MB limit of an attention file; keep fewer matrices."
        )
        return
    try:
        found = _read(upload.getvalue(), upload.name)
    except AttnvizError as e:
        st.error(error_text(e))
        return
    first = next(iter(found.alignments.values()))
    n = len(found.alignments)
    st.caption(
        f"{escape_markdown(upload.name)}: {n} {'matrix' if n == 1 else 'matrices'}, {len(first.source_tokens)} "
        f"source × {len(first.target_tokens)} target tokens{' in the first' if n > 1 else ''}."
    )
    if found.metadata:
        with st.expander("Metadata"):
            st.json(found.metadata)
    show_alignments(found.alignments, KEY)
