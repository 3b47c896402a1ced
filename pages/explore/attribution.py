"""Explore's Attribution view: gradient attributions beside attention (attnviz.explain.attribution)."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from attnviz.explain import MAX_SOURCE_TOKENS, Attribution, attribute
from attnviz.plots import attribution_heatmap
from pages.explore.views import Panels, chart, columns, panel_width
from pages.shared.common import escape_markdown, load_model, user_errors

METHODS = {"ig": "Integrated gradients", "gxi": "Gradient × input", "occlusion": "Occlusion (one token)"}
METHOD_KEY = "explore_attr_method"


@st.cache_data(max_entries=64, show_spinner=False)
def cached_attribution(path: str, mtime: float, text: str, method: str) -> Attribution:
    """One attribution per (model file, version, sentence, method): it costs about a second."""
    return attribute(load_model(path, mtime), text, method=method)


def attribution_view(panels: Panels, versions: dict[str, tuple[str, float]], text: str, image_format: str) -> None:
    """Per panel: the attribution heatmap on the weights' axes, per-step agreement, a summary."""
    method = st.segmented_control("Method", list(METHODS), format_func=METHODS.get, key=METHOD_KEY,
                                  persist_state="session", default="ig") or "ig"  # fmt: skip
    for col, name in zip(columns(panels), panels, strict=True):
        with col:
            with st.spinner(f"{METHODS[method]} for {name}…"), user_errors():
                attr = cached_attribution(*versions[name], text, method)
            title = f"{name}: {attr.method_name}"
            fig = attribution_heatmap(attr.values, attr.alignment, title, max_width=panel_width(panels))
            chart(fig, f"explore_attribution_{name}", image_format, f"attribution-{name}")
            st.markdown(escape_markdown(attr.summary()))
            rows = [
                {"step": t, "target": attr.target_tokens[t], "attention's first": attr.attention_top[t],
                 "attribution's first": attr.attribution_top[t],
                 "Spearman": None if math.isnan(attr.spearman[t]) else round(float(attr.spearman[t]), 3),
                 "top-1 agrees": bool(attr.top1[t]),
                 **({"IG delta": round(float(attr.delta[t]), 4)} if attr.delta is not None else {})}
                for t in range(len(attr.target_tokens))
            ]  # fmt: skip
            st.dataframe(pd.DataFrame(rows), hide_index=True, key=f"explore_attr_table_{name}")
    st.caption(
        f"What each source token contributed to the log-probability of the token chosen at each step, from the "
        f"source embeddings, summed over their dimensions; baseline: the zero embedding. Integrated gradients "
        f"sums the gradient along the straight path from the baseline (its delta: how far the sum is from the "
        f"log-probability difference it should equal); gradient × input is its one-point version; occlusion "
        f"replaces one source token by the baseline and re-decodes. Red raises the chosen token, blue lowers it. "
        f"Sources longer than {MAX_SOURCE_TOKENS} tokens are refused (the cost grows with source × target)."
    )
