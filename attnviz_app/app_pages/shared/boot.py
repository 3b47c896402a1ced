"""Imported first by app.py and every page, before any other attnviz import.

Streamlit runs each session's script in its own thread. On a fresh server, two sessions that
first import different parts of attnviz at the same moment can deadlock in Python's import
machinery (each thread holds one submodule's lock and waits for the other's): seen once with
the Train and Explore pages opened together. Loading the whole library here, as one module,
serializes that: a second thread waits for this module as a whole, holding no other lock.
"""

import gc

from attnviz.data import clean_table_caches
from attnviz.server import server_folder
from attnviz.store import clean_stale_temp, models_dir
from pages.shared import uploads  # noqa: F401  (tells the library about Streamlit's sessions)

clean_stale_temp(models_dir())  # temp files a killed save left behind (once per server)
server_folder()  # claims this server's upload folder; deletes those of servers that are gone
clean_table_caches()  # Arrow copies of tables that a killed or older process left
READY = True  # app.py: the library is loaded (by the server's warm-up or the first session)
gc.freeze()  # the library, torch and Plotly stay for the server's life: keep them out of every GC scan
