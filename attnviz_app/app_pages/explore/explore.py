"""Explore: pick a model, type a sentence, see and touch its attention; flip Bahdanau ↔ Luong.

On a fresh server the front page is drawn from its record while the library loads (front.py);
otherwise, and once the library is loaded, the page itself (page.py).
"""

from attnviz_app import loading
from attnviz_app.app_pages.explore import front
from attnviz_app.app_pages.explore.screen import measure_page

if not front.draw(ready=loading.library_ready):
    measure_page()  # a first visit's width arrives while the library loads (screen.py)
    loading.load_library()
    from attnviz_app.app_pages.explore.page import render

    render()
