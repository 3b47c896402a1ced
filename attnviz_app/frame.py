"""attnviz: the frame of the app. Page config, the library loaded once, the navigation.

Each page lives in ``app_pages/`` and is routed here with ``st.navigation``; Explore is the
default. The entry files (``attnviz_app/app.py``, which ``attnviz app`` runs, and a checkout's
top-level ``app.py``) call :func:`main` as every session's script and build the server with
:func:`lifespan`, which starts the library's housekeeping and warm-up when the server starts;
:func:`clean_up_on_signals` removes what the server made when a signal stops it.
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

from attnviz_app import APP_DIR, page_file
from attnviz_app.app_pages.explore import front
from attnviz_app.loading import load_library

# served by this app: an emoji or a material icon name makes every page load fetch the favicon from a CDN
# (the pages' material icons too, unless this is set before the navigation: main)
PAGE_ICON = str(APP_DIR / "app_pages" / "shared" / "favicon.png")


def _warm_up() -> None:
    """Server start: load torch, the library and Plotly, tidy up, and decode the front page's
    example once (see boot.py), without ever keeping the server from serving. Where Explore's
    front page can be drawn from its record (explore/front.py), the loading waits until a first
    visitor's page has drawn it (front.wait_for_first_paint): importing torch holds Python's lock, which
    would slow the server sending the browser its frontend and that page."""
    if front.load_record() is not None:
        front.wait_for_first_paint()
    try:
        # Plotly looks numpy and pandas up in sys.modules without importing them: a page validating a chart
        # while this thread imports them saw a half-initialised pandas ("no attribute 'Series'"). The
        # record's charts are validated under front.plotting; a page's own import statement waits for this
        # thread's import to finish (as loading.load_library does on the page's side).
        with front.plotting:
            import numpy  # noqa: F401
            import pandas  # noqa: F401

        from attnviz_app.app_pages.shared import boot

        boot.warm_up()
    except Exception:  # the first session will say what is wrong
        logging.getLogger("attnviz").warning("warm-up at server start failed", exc_info=True)


@contextlib.asynccontextmanager
async def lifespan(_app: st.App) -> AsyncIterator[None]:
    """The server's start: the warm-up runs in a thread while the server starts serving."""
    threading.Thread(target=_warm_up, name="attnviz-warm-up", daemon=True).start()
    yield


def _remove_uploads() -> None:
    """The server's upload folder goes with the server. The warm-up thread loads the library; a
    server stopped before that made no folder."""
    server = sys.modules.get("attnviz.server")
    remove = getattr(server, "remove_server_folder", None)  # None while the package is still loading
    if remove is not None:
        remove()


def clean_up_on_signals() -> None:
    """Remove the server's upload folder when SIGTERM (docker stop, systemd) or SIGINT stops it.
    The entry files call it where Streamlit imports them to find their server: in the main
    thread, the only one that may set signal handlers."""
    from attnviz_app.app_pages.shared.shutdown import clean_on_signals

    clean_on_signals(_remove_uploads)


def _pages() -> list:
    return [
        st.Page(
            page_file("explore/explore.py"),
            title="Explore",
            icon=":material/travel_explore:",
            url_path="front",  # served at /; Streamlit reserves a default page's name without serving it
            default=True,
        ),
        st.Page(page_file("compare.py"), title="Compare", icon=":material/compare:", url_path="compare"),
        st.Page(page_file("train/train.py"), title="Train", icon=":material/model_training:", url_path="train"),
        st.Page(page_file("yours/yours.py"), title="Your model", icon=":material/upload_file:", url_path="yours"),
        st.Page(page_file("data.py"), title="Data", icon=":material/table_view:", url_path="data"),
        st.Page(page_file("evaluate.py"), title="Evaluate", icon=":material/leaderboard:", url_path="evaluate"),
        st.Page(page_file("learn.py"), title="Learn", icon=":material/school:", url_path="learn"),
        # /explore, as the other pages' addresses suggest: the same page, unlisted
        st.Page(page_file("explore/explore.py"), title="Explore", url_path="explore", visibility="hidden"),
    ]


def _run_timed(page: st.Page) -> None:
    """Run the page; with ``ATTNVIZ_RERUN_LOG=FILE`` append its server-side time as a JSON line
    (benchmarks/interaction.py and load_test.py read it: the server's share of every rerun; a run
    cut short by a rerun request, an error or st.stop is marked ``"interrupted": true``), and
    with ``ATTNVIZ_PROFILE=DIR`` write each rerun's cProfile statistics there."""
    log, profile_dir = os.environ.get("ATTNVIZ_RERUN_LOG"), os.environ.get("ATTNVIZ_PROFILE")
    profiler = None
    if profile_dir:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    start, cpu = time.perf_counter(), time.thread_time()
    interrupted = True  # a rerun request (Streamlit's RerunException) cut the run short, or it stopped
    try:
        page.run()
        interrupted = False
    finally:
        if profiler:
            profiler.disable()
            profiler.dump_stats(os.path.join(profile_dir, f"rerun-{time.time_ns()}.prof"))
        if log:
            record = {
                "page": page.url_path or "explore",
                "seconds": round(time.perf_counter() - start, 4),
                "cpu_seconds": round(time.thread_time() - cpu, 4),
                "at": round(time.time(), 3),
            }
            if interrupted:
                record["interrupted"] = True
            with open(log, "a", encoding="utf-8") as out:
                out.write(json.dumps(record) + "\n")


def main() -> None:
    """A session's script run: the page config, the navigation, the library, the chosen page."""
    # The favicon before the navigation: a browser that gets the navigation first shows the page's
    # material icon as the favicon, fetched from Google's font CDN (Streamlit's frontend).
    st.set_page_config(page_icon=PAGE_ICON, layout="wide")
    page = st.navigation(_pages())
    st.set_page_config(page_title=f"{page.title} · attnviz")  # each page its title
    if page.url_path not in ("", "explore"):  # Explore loads it itself, after its front page (explore.py)
        load_library()
    _run_timed(page)
