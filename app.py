"""attnviz's Streamlit app from a checkout: ``streamlit run app.py``.

The same entry as attnviz_app/app.py (which an installed package runs with ``attnviz app``):
``streamlit run`` reads it once as a module, to find the server (``app``, an ``st.App`` that
starts the library's housekeeping and warm-up when the server starts and removes the server's
upload folder when it is stopped), then as every session's script (``__main__``), which draws
the pages. The frame is attnviz_app/frame.py.
"""

import streamlit as st

from attnviz_app.frame import clean_up_on_signals, lifespan, main

if __name__ == "__main__":  # a session's script run
    main()
else:  # imported by `streamlit run app.py` to find its server, in the main thread, before it serves
    clean_up_on_signals()  # the upload folder goes with a server stopped by SIGTERM or SIGINT
    app = st.App(__file__, lifespan=lifespan)  # Streamlit finds the server by this very call
