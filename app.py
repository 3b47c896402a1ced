"""attnviz: the frame of the app. Page config, the library loaded once, the navigation.

Each page lives in ``pages/`` and is routed here with ``st.navigation``; Explore is the default.
``streamlit run app.py`` reads this file twice: once as a module, to find the server (``app``,
an ``st.App`` that warms the library up when the server starts), then as every session's script
(``__main__``), which draws the pages.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import threading
import time
from collections.abc import AsyncIterator

import streamlit as st

# served by this app: an emoji or a material icon name makes every page load fetch the favicon from a CDN
PAGE_ICON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pages", "shared", "favicon.png")


def _warm_up() -> None:
    """Server start: load torch, the library and Plotly, and decode the front page's example
    once, while the first browser is still fetching Streamlit's frontend (a cold first visit
    otherwise waits for all of it)."""
    log = logging.getLogger("attnviz")
    try:
        import pages.shared.boot  # noqa: F401  (see boot.py)
        from attnviz.errors import AttnvizError
        from attnviz.server import front_page

        try:
            front_page()
        except AttnvizError as e:  # e.g. a broken checkpoint: the page says so when it is opened
            log.warning("warm-up at server start skipped the front model: %s", e)
    except Exception:  # never keep the server from serving; the first session will say what is wrong
        log.warning("warm-up at server start failed", exc_info=True)


def _route_every_page_through_app() -> None:
    """Until a session's script first calls ``st.navigation``, Streamlit treats a ``pages/`` folder
    beside app.py as an old-style multipage app: a fresh server's first visit to ``/evaluate`` ran
    ``pages/evaluate.py`` alone, without this frame (no page config, no library, no Train page in
    its navigation), and so did every reload until someone opened ``/``. Say at server start that
    this app routes its pages itself, which the first ``st.navigation`` call would say anyway."""
    try:
        from streamlit.runtime.pages_manager import PagesManager  # internal: the pinned version has it
    except ImportError:
        logging.getLogger("attnviz").warning("could not turn off the pages/ folder routing; open / first")
        return
    PagesManager.uses_pages_directory = False


@contextlib.asynccontextmanager
async def _server_lifespan(_app: st.App) -> AsyncIterator[None]:
    _route_every_page_through_app()
    threading.Thread(target=_warm_up, name="attnviz-warm-up", daemon=True).start()
    yield


def _remove_uploads() -> None:
    """The server's upload folder goes with the server. The warm-up thread loads the library; a
    server stopped before that made no folder."""
    uploads = sys.modules.get("attnviz.server.uploads")
    remove = getattr(uploads, "remove_server_folder", None)  # None while the module is still loading
    if remove is not None:
        remove()


def _load_library() -> None:
    """Import attnviz (and torch) once per server. On a fresh server this takes seconds: a
    placeholder chart with a spinner shows that something loads, and makes the browser fetch
    and compile Plotly meanwhile, so the first heatmap draws as soon as it arrives."""
    if getattr(sys.modules.get("pages.shared.boot"), "READY", False):
        return
    # Plotly looks numpy and pandas up in sys.modules without importing them: while the server's
    # warm-up thread is importing them it saw a half-initialised pandas ("no attribute 'Series'").
    # An import statement waits for the other thread to finish.
    import numpy  # noqa: F401
    import pandas  # noqa: F401

    warming = st.empty()
    with warming.container():
        st.plotly_chart(
            {"data": [{"type": "scatter", "x": [], "y": []}],
             "layout": {"height": 40, "xaxis": {"visible": False}, "yaxis": {"visible": False}}},
            key="app_warmup", config={"staticPlot": True},
        )  # fmt: skip
        with st.spinner("Loading the attention library (torch) for the first time…"):
            import pages.shared.boot  # noqa: F401  (loads attnviz once; see boot.py)
    warming.empty()


def _pages() -> list:
    return [
        st.Page(
            "pages/explore/explore.py",
            title="Explore",
            icon=":material/travel_explore:",
            url_path="explore",
            default=True,
        ),
        st.Page("pages/compare.py", title="Compare", icon=":material/compare:", url_path="compare"),
        st.Page("pages/train/train.py", title="Train", icon=":material/model_training:", url_path="train"),
        st.Page("pages/yours/yours.py", title="Your model", icon=":material/upload_file:", url_path="yours"),
        st.Page("pages/data.py", title="Data", icon=":material/table_view:", url_path="data"),
        st.Page("pages/evaluate.py", title="Evaluate", icon=":material/leaderboard:", url_path="evaluate"),
        st.Page("pages/learn.py", title="Learn", icon=":material/school:", url_path="learn"),
    ]


def _run_timed(page) -> None:
    """Run the page; with ``ATTNVIZ_RERUN_LOG=FILE`` append its server-side time as a JSON line
    (benchmarks/interaction.py and load_test.py read it: the server's share of every rerun), and
    with ``ATTNVIZ_PROFILE=DIR`` write each rerun's cProfile statistics there."""
    log, profile_dir = os.environ.get("ATTNVIZ_RERUN_LOG"), os.environ.get("ATTNVIZ_PROFILE")
    profiler = None
    if profile_dir:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    start, cpu = time.perf_counter(), time.thread_time()
    try:
        page.run()
    finally:
        if profiler:
            profiler.disable()
            profiler.dump_stats(os.path.join(profile_dir, f"rerun-{time.time_ns()}.prof"))
        if log:
            record = {"page": page.url_path or "explore", "seconds": round(time.perf_counter() - start, 4),
                      "cpu_seconds": round(time.thread_time() - cpu, 4), "at": round(time.time(), 3)}  # fmt: skip
            with open(log, "a", encoding="utf-8") as out:
                out.write(json.dumps(record) + "\n")


if __name__ == "__main__":  # a session's script run
    st.set_page_config(page_title="attnviz", page_icon=PAGE_ICON, layout="wide")
    page = st.navigation(_pages())
    _load_library()
    _run_timed(page)
else:  # imported by `streamlit run app.py` to find its server, in the main thread, before it serves
    from pages.shared.shutdown import clean_on_signals

    clean_on_signals(_remove_uploads)  # SIGTERM (docker stop, systemd) and SIGINT too
    app = st.App(__file__, lifespan=_server_lifespan)
