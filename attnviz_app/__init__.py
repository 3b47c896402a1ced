"""attnviz's Streamlit app, shipped in the same wheel as the library (which has no Streamlit).

``app.py`` here is the app's entry file (``attnviz app`` runs it with ``streamlit run``; a checkout's
top-level ``app.py`` runs the same frame), ``.streamlit/config.toml`` beside it the server settings
Streamlit reads for that entry file, and ``app_pages/`` the pages it routes with ``st.navigation``.
The pages folder is not called ``pages/``: Streamlit runs a ``pages/`` folder beside an entry file
as an old-style multipage app until some session first calls ``st.navigation``.

Importing this package imports no Streamlit and no torch.
"""

from __future__ import annotations

from pathlib import Path

APP_DIR = Path(__file__).resolve().parent
PAGES_DIR = APP_DIR / "app_pages"


def page_file(relative: str) -> str:
    """A page's file (``"train/train.py"``) as the absolute path ``st.Page`` and ``st.switch_page``
    take: either entry file (the checkout's or the package's) routes the same pages."""
    return str(PAGES_DIR / relative)
