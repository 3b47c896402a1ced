"""The app's start-up: the library loaded once, the housekeeping a new server does, the warm-up.

Importing this module loads the whole library and does nothing else; app.py calls :func:`start`
(every session, before its page) and :func:`warm_up` (once, when the server starts). Both do
their work once per process, whichever thread calls first; the others wait for it.

Streamlit runs each session's script in its own thread. On a fresh server, two sessions that
first import different parts of attnviz at the same moment can deadlock in Python's import
machinery (each thread holds one submodule's lock and waits for the other's): seen once with
the Train and Explore pages opened together. Loading the whole library here, as one module,
serializes that: a second thread waits for this module as a whole, holding no other lock.
"""

from __future__ import annotations

import gc
import logging
import threading

from attnviz.data import clean_table_caches
from attnviz.errors import AttnvizError
from attnviz.server import front_page, server_folder
from attnviz.store import clean_stale_temp, models_dir
from attnviz_app.app_pages.shared import uploads  # noqa: F401  (tells the library about Streamlit's sessions)
from attnviz_app.app_pages.shared.common import model_version, translate

_lock = threading.Lock()
_done: set[str] = set()  # "start", "warm-up": what this process has done


def started() -> bool:
    """Whether :func:`start` has run in this process (app.py skips its loading placeholder then)."""
    return "start" in _done


def start() -> None:
    """Tidy what other processes left, once per process: temp files a killed save left in the
    models folder, the upload folders of servers that are gone (this server claims its own), and
    Arrow copies of tables that a killed or older process wrote. Then keep the library, torch and
    Plotly, which stay for the server's life, out of every garbage-collector scan."""
    with _lock:
        if "start" in _done:
            return
        clean_stale_temp(models_dir())
        try:
            server_folder()
        except AttnvizError as e:  # the pages work; an upload says why it cannot be stored
            logging.getLogger("attnviz").warning("no upload folder: %s", e)
        clean_table_caches()
        gc.freeze()
        _done.add("start")


# Streamlit warns once when a cached function runs outside a session's script run, as the
# warm-up's decode does on purpose; that line would only puzzle whoever reads the server's log
_CONTEXT_LOGGER = "streamlit.runtime.scriptrunner_utils.script_run_context"


class _NoContextWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.threadName == threading.current_thread().name and "ScriptRunContext" in record.getMessage())


def warm_up() -> None:
    """:func:`start`, then load the front page's model and decode its example once, through the
    app's caches: the first visitor's page finds both there (a cold first visit otherwise waits
    for the model, torch's kernels and Plotly's validators). A broken model is one warning: the
    page says what is wrong when it is opened."""
    start()
    with _lock:
        if "warm-up" in _done:
            return
        _done.add("warm-up")
    quiet = _NoContextWarning()
    logging.getLogger(_CONTEXT_LOGGER).addFilter(quiet)
    try:
        front_page(decode=lambda entry, text: translate(*model_version(entry), text, 1))
    except AttnvizError as e:  # e.g. a broken checkpoint
        logging.getLogger("attnviz").warning("warm-up at server start skipped the front model: %s", e)
    finally:
        logging.getLogger(_CONTEXT_LOGGER).removeFilter(quiet)
