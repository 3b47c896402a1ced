"""attnviz · Explore: pick a model, type a sentence, see and touch its attention alignment."""

from __future__ import annotations

import sys

import streamlit as st

st.set_page_config(page_title="attnviz · Explore", page_icon="🔎", layout="wide")
st.title("Explore attention")


def main() -> None:
    warming = st.empty()
    if "torch" not in sys.modules:
        # First run of a fresh server: importing torch takes seconds. Meanwhile a placeholder chart
        # makes the browser fetch and compile Plotly, so the heatmap draws as soon as it arrives.
        placeholder = {
            "data": [{"type": "scatter", "x": [], "y": []}],
            "layout": {"height": 80, "xaxis": {"visible": False}, "yaxis": {"visible": False}},
        }
        warming.plotly_chart(placeholder, key="explore_warmup", config={"staticPlot": True})
    import pages.shared.boot  # noqa: F401  (loads attnviz once; see boot.py)
    from pages.shared.explore_page import render

    warming.empty()
    render()


main()
