"""Your model: the attention file source."""

from __future__ import annotations

import streamlit as st


def render() -> None:
    st.info("Not available yet.")
