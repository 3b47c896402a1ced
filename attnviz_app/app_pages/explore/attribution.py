"""Explore's Attribution view: gradient attributions beside attention (attnviz.explain.attribution)."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from attnviz.explain import MAX_SOURCE_TOKENS, MAX_STEPS, Attribution, attribute, delta_note, eos_note
from attnviz.plots import align_tops, attribution_heatmap, explore_heatmap, share_scales
from attnviz_app.app_pages.explore.views import Panels, chart, columns, file_name, panel_width, side_by_side
from attnviz_app.app_pages.shared.common import escape_markdown, load_model, user_errors
from attnviz_app.app_pages.shared.paper_ui import paper_download

METHODS = {"ig": "Integrated gradients", "gxi": "Gradient × input", "occlusion": "Occlusion (one token)"}
METHOD_KEY = "explore_attr_method"
STEPS = (32, 64, 128, 256, MAX_STEPS)  # integrated gradients' quadrature points offered
STEPS_KEY = "explore_attr_steps"
KINDS = ("attention", "attribution")  # the two maps of a panel, drawn side by side


def _maps(attr: Attribution, title: str) -> tuple[bool, list]:
    """One panel's attention map and attribution map, each on its own scale (shared afterwards),
    and whether the two go one under the other."""
    pair = dict.fromkeys(KINDS, attr.alignment)
    stack = not side_by_side(pair)
    width = panel_width(pair, stack)
    attention = explore_heatmap(attr.alignment, "weights", f"{title} · attention", max_width=width, fill=True)
    attributed = attribution_heatmap(attr.values, attr.alignment, f"{title} · {attr.method_name}", width, fill=True)
    return stack, [attention, attributed]


@st.cache_data(max_entries=64, show_spinner=False)
def cached_attribution(path: str, mtime: float, text: str, method: str, beam: int, steps: int) -> Attribution:
    """One attribution per (model file, version, sentence, method, beam, steps): about a second at 32 steps."""
    return attribute(load_model(path, mtime), text, method=method, steps=steps, beam_size=beam)


def attribution_view(
    panels: Panels,
    versions: dict[str, tuple[str, float]],
    text: str,
    image_format: str,
    titles: dict[str, str],
    beam: int = 1,
) -> None:
    """Per panel: its attention map and, beside it, the attribution map on the same axes (one
    colour scale per kind of map across the panels), per-step agreement, a summary. Each panel's
    attribution explains the translation shown above (beam search of width ``beam``)."""
    method_col, steps_col = st.columns([3, 2])
    with method_col:
        method = (
            st.segmented_control(
                "Method", list(METHODS), format_func=METHODS.get, key=METHOD_KEY, persist_state="session", default="ig"
            )
            or "ig"
        )
    steps = STEPS[0]
    if method == "ig":
        with steps_col:
            steps = st.select_slider(
                "Quadrature steps",
                STEPS,
                value=STEPS[0],
                key=STEPS_KEY,
                persist_state="session",
                help="More steps bring the IG delta towards 0; the cost grows with them (512: about 16 times 32's)",
            )
    attrs: dict[str, Attribution] = {}
    for name in panels:
        with st.spinner(f"{METHODS[method]} for {name}…", show_time=steps > STEPS[0]), user_errors():
            attrs[name] = cached_attribution(*versions[name], text, method, beam, steps)
    maps = {name: _maps(attr, titles[name]) for name, attr in attrs.items()}
    for k in range(2):  # attention maps on one scale, attribution maps on another
        share_scales([figs[k] for _, figs in maps.values()])
    for name, attr in attrs.items():
        stack, figs = maps[name]
        for col, kind, fig in zip(columns(dict.fromkeys(KINDS), stack), KINDS, align_tops(figs), strict=True):
            with col:
                chart(fig, f"explore_attribution_{kind}_{name}", image_format, f"{kind}-{method}", name)
        st.markdown(
            f"**{escape_markdown(name)}**: {escape_markdown(attr.summary())}"
            if len(panels) > 1
            else escape_markdown(attr.summary())
        )
        rows = [
            {
                "step": t,
                "target": attr.target_tokens[t],
                "attention's first": attr.attention_top[t],
                "attribution's first": attr.attribution_top[t],
                "Spearman": None if math.isnan(attr.spearman[t]) else round(float(attr.spearman[t]), 3),
                "top-1 agrees": bool(attr.top1[t]),
                **({"IG delta": float(attr.delta[t])} if attr.delta is not None else {}),
            }
            for t in range(len(attr.target_tokens))
        ]
        with st.expander(f"{name}: step by step", key=f"explore_attr_steps_{name}"):
            st.dataframe(
                pd.DataFrame(rows),
                hide_index=True,
                key=f"explore_attr_table_{name}",
                column_config={"IG delta": st.column_config.NumberColumn(format="%.1e")},
            )
        notes = " ".join(n for n in (eos_note(attr), delta_note(attr)) if n)
        if notes:
            st.caption(escape_markdown(notes))
    method_name = next(iter(attrs.values())).method_name
    paper_download(
        {n: a.alignment for n, a in attrs.items()},
        titles,
        text,
        "weights",
        file_name(f"figure-attribution-{method}"),
        f"explore_paper_attribution_{method}",
        attributions={n: a.values for n, a in attrs.items()},
        method=method_name,
    )
    scale = " One colour scale per kind of map for both models." if len(panels) > 1 else ""
    st.caption(
        f"What each source token contributed to the log-probability of the token chosen at each step of the "
        f"translation above{' (beam search)' if beam > 1 else ''}, from the "
        f"source embeddings, summed over their dimensions; baseline: the zero embedding. Integrated gradients "
        f"sums the gradient along the straight path from the baseline (its delta: how far the sum is from the "
        f"log-probability difference it should equal); gradient × input is its one-point version; occlusion "
        f"replaces one source token by the baseline and scores the same translation again. Red raises the "
        f"chosen token, blue lowers it. "
        f"Sources longer than {MAX_SOURCE_TOKENS} tokens are refused (the cost grows with source × target).{scale}"
    )
