"""The library (torch and attnviz) loaded once per server, and whether it is loaded yet.

Nothing here imports torch until :func:`load_library` is called: the app's frame and Explore's
front page (explore/front.py) ask :func:`library_ready` before they decide what to draw.
"""

from __future__ import annotations

import sys

import streamlit as st

BOOT = "attnviz_app.app_pages.shared.boot"


def library_ready() -> bool:
    """Whether boot.start() has run in this process. The server's warm-up thread may be importing
    boot.py right now: a half-imported module has no ``started`` yet, which counts as not ready."""
    started = getattr(sys.modules.get(BOOT), "started", None)
    return started is not None and started()


def load_library() -> None:
    """Import attnviz (and torch) once per server and run its start-up. On a fresh server this
    takes seconds: a placeholder chart with a spinner shows that something loads, and makes the
    browser fetch and compile Plotly meanwhile, so the first heatmap draws as soon as it arrives."""
    if library_ready():
        return
    # Plotly looks numpy and pandas up in sys.modules without importing them: while the server's
    # warm-up thread is importing them it saw a half-initialised pandas ("no attribute 'Series'").
    # An import statement waits for the other thread to finish.
    import numpy  # noqa: F401
    import pandas  # noqa: F401

    warming = st.empty()
    with warming.container():
        st.plotly_chart(
            {
                "data": [{"type": "scatter", "x": [], "y": []}],
                "layout": {"height": 40, "xaxis": {"visible": False}, "yaxis": {"visible": False}},
            },
            key="app_warmup",
            config={"staticPlot": True},
        )
        with st.spinner("Loading the attention library (torch) for the first time…"):
            from attnviz_app.app_pages.shared import boot

            boot.start()
    warming.empty()
