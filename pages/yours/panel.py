"""Your model: the views every source shares, over ``Alignment`` traces (one per layer, head,
hypothesis or model)."""

from __future__ import annotations

import streamlit as st

from attnviz.plots import explore_heatmap, plot_config


def show_alignments(alignments: dict, key: str) -> None:
    """Draw one named ``Alignment`` (the user picks which) as the heatmap Explore draws."""
    if not alignments:
        st.info("Nothing to show.")
        return
    name = st.selectbox("Matrix", list(alignments), key=f"{key}_matrix")
    fig = explore_heatmap(alignments[name], title=name)
    st.plotly_chart(fig, config=plot_config(f"attnviz-{key}"), key=f"{key}_map")
