"""The views of one decode on the Explore page: weights, raw scores, per step, context vectors."""

from __future__ import annotations

import numpy as np
import streamlit as st

from attnviz.plots import context_heatmap, context_projection, plot_config, step_bar
from attnviz.plots_explore import context_bar, coverage_bar, explore_heatmap, step_animation
from attnviz.trace import Alignment
from pages.shared.math_panel import selected_cell, show_math

STEP_KEY = "explore_step"
LOCAL_NOTE = {
    "local_p": r" Local-p predicts a centre $p_t = S\,\sigma(v_p^\top \tanh(W_p h_t))$ (dotted line) and multiplies"
    r" the softmax over the window $|s - p_t| \le D$ by a Gaussian $\exp(-(s-p_t)^2 / 2\sigma^2)$, $\sigma = D/2$.",
    "local_m": r" Local-m looks at the window $|s - t| \le D$ only; other cells are 0.",
}


def chart(fig, key: str, image_format: str, name: str, selectable: bool = False):
    """``st.plotly_chart`` at the figure's own size, zoom and pan on, a PNG/SVG download button."""
    config = plot_config(f"attnviz-{name}", image_format)
    if selectable:
        return st.plotly_chart(fig, key=key, on_select="rerun", selection_mode="points", width="content", config=config)
    st.plotly_chart(fig, key=key, width="content", config=config)
    return None


def weights_view(al: Alignment, annotations: np.ndarray | None, image_format: str, title: str) -> None:
    """The alignment heatmap; a click on a cell shows its numbers in the math panel."""
    st.caption(
        r"Row $t$ is what the decoder read while writing target token $t$: $a_{t,s} = \exp(e_{t,s}) /"
        r" \sum_{s'} \exp(e_{t,s'})$, so each row sums to 1, and the context is $c_t = \sum_s a_{t,s} \bar h_s$."
        + LOCAL_NOTE.get(al.score, "")
        + " Hover for both tokens, the weight and the raw score; ⚠ marks words the model does not know."
    )
    event = chart(explore_heatmap(al, "weights", title), "explore_heat_weights", image_format, "weights", True)
    with st.expander("Coverage: how much attention each source word received", expanded=False):
        st.caption(
            r"Column sums $\sum_t a_{t,s}$: about 1 for a word translated once; orange (under 0.3) for a word the"
            " decoder hardly read, perhaps left untranslated; red (over 1.7) for one it read again and again,"
            " perhaps translated twice."
        )
        chart(coverage_bar(al), "explore_coverage_chart", image_format, "coverage")
    st.subheader("The numbers of one cell")
    t, s = selected_cell(event, al)
    show_math(al, t, s, annotations)


def scores_view(al: Alignment, annotations: np.ndarray | None, image_format: str, title: str) -> None:
    """The raw energies ``e_ts`` before the softmax (red positive, blue negative)."""
    st.caption(
        r"The raw scores $e_{t,s} = \mathrm{score}(\text{query}_t, \bar h_s)$ before the softmax. Only their"
        r" differences within a row matter: the softmax is unchanged by adding a constant to a row."
        " Blank cells lie outside a local window ($-\\infty$)."
    )
    fig = explore_heatmap(al, "scores", f"{title} (raw scores)")
    event = chart(fig, "explore_heat_scores", image_format, "scores", True)
    t, s = selected_cell(event, al)
    show_math(al, t, s, annotations)


def _step_slider(n_steps: int) -> int:
    """A slider over decoder steps whose remembered value is clamped to this decode's length."""
    if n_steps == 1:
        st.caption("This decode has one step (t = 0).")
        return 0
    if not 0 <= st.session_state.get(STEP_KEY, 0) < n_steps:
        st.session_state[STEP_KEY] = n_steps - 1
    return int(st.slider("Decoder step t", 0, n_steps - 1, key=STEP_KEY))


def step_view(al: Alignment, image_format: str) -> None:
    """One step at a time (server slider), then every step as a browser-side animation."""
    st.caption(
        r"Step $t$: the softmax $a_t$ over the source (bars) with the raw scores $e_t$ (dotted, right axis),"
        r" and the context vector $c_t = \sum_s a_{t,s} \bar h_s$ it produces." + LOCAL_NOTE.get(al.score, "")
    )
    t = _step_slider(len(al.target_tokens))
    left, right = st.columns(2)
    with left:
        chart(step_bar(al, t), "explore_step_bar", image_format, f"step-{t}")
    with right:
        chart(context_bar(al, t), "explore_step_context", image_format, f"context-{t}")
    if al.positions is not None:
        st.markdown(
            f"Predicted centre $p_{{{t}}} = {float(al.positions[t]):.3f}$, window half-width $D = {al.window}$."
        )
    st.markdown("**Play every step** (runs in the browser: ▶ Play, or drag the slider under the plot)")
    chart(step_animation(al), "explore_step_animation", image_format, "steps")


def context_view(al: Alignment, image_format: str) -> None:
    """The context vectors ``c_t`` of every step: as a heatmap and projected to 2-D."""
    st.caption(
        r"Each row is $c_t = \sum_s a_{t,s} \bar h_s$, the weighted average of the encoder states the decoder"
        " received at step $t$. The projection keeps the two directions of largest variance (PCA): steps that"
        " read the same source words land close together."
    )
    chart(context_heatmap(al), "explore_context_heatmap", image_format, "contexts")
    if len(al.target_tokens) >= 2:
        chart(context_projection(al), "explore_context_projection", image_format, "contexts-2d")
    else:
        st.info("A 2-D projection needs at least two decoder steps.")
