"""attnviz's Streamlit app: the entry file ``attnviz app`` gives ``streamlit run``.

``streamlit run`` reads it twice: once as a module, to find the server (``app``, an ``st.App``
that starts the library's housekeeping and warm-up when the server starts), then as every
session's script (``__main__``), which draws the pages. The frame is attnviz_app/frame.py.
"""

import streamlit as st

from attnviz_app.frame import lifespan, main

if __name__ == "__main__":  # a session's script run
    main()
else:  # imported by `streamlit run` to find its server
    app = st.App(__file__, lifespan=lifespan)
